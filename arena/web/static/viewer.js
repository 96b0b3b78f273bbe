/* Arena's match viewer: steps through a match's frames and lets a game's drawer
   (risk.js, stratego.js) draw each one. The server computes every fact (the rules
   live in Python); this script only applies the frames' deltas and draws.

   Frames (docs/web.md, "The frame API"): frame i is the position after i steps.
   keyframes[k] is the whole view of frame k * keyframe_every; deltas[i] changes
   frame i - 1 into frame i; log[i] is [seat, events] of the step that led to it.
   A live match's page gets frames pushed as server-sent events, where a frame may
   cover several steps (the referee gives a fast match's position once a batch):
   steps[i] is the step of frame i and log[i] lists [seat, events] of each step since
   frame i - 1.
   A long replay's page is drawn from its tail, the frames from `first` on (the
   section's data-first): the viewer loads that first, shows the end, then loads every
   frame; until then a frame before `first` waits ("Loading earlier steps…"). */
"use strict";

window.ArenaViewer = window.ArenaViewer || { drawers: {} };

(function () {
  const root = document.getElementById("viewer");
  if (!root || !root.querySelector("[data-controls]")) return;
  const drawer = window.ArenaViewer.drawers[root.dataset.game];
  const matchId = root.dataset.match;
  const mode = root.dataset.mode;
  const $ = (selector) => root.querySelector(selector);
  const controls = $("[data-controls]");
  const slider = $("[data-slider]");
  const counter = $("[data-counter]");
  const status = $("[data-status]");
  const logList = $("[data-log]");
  const playButton = controls.querySelector('[data-go="play"]');
  const LOG_BEFORE = 12; // log lines shown before the current step (none after it)

  function copy(value) {
    return value !== null && typeof value === "object" ? structuredClone(value) : value;
  }

  /* view changed by one delta, in place: "~key" sets items of a list, "-" removes keys */
  function applyDelta(view, delta) {
    for (const key in delta) {
      const value = delta[key];
      if (key === "-") {
        for (const gone of value) delete view[gone];
      } else if (key[0] === "~") {
        const list = view[key.slice(1)];
        for (const [index, item] of value) list[index] = copy(item);
      } else {
        view[key] = copy(value);
      }
    }
  }

  /* The frames of a match, and the view of any one of them: the nearest keyframe at or
     before it and fewer than keyframe_every deltas, or the deltas after the frame shown
     last when that is nearer. A tail holds the frames from `first` on (a keyframe):
     its lists start there. */
  class Frames {
    constructor(doc) {
      this.every = doc.keyframe_every;
      this.base = doc.base || 0; // the match's step of frame 0 (a live view may start late)
      this.first = doc.first || 0; // the frames before it are not loaded (yet)
      this.keyframes = doc.keyframes;
      this.deltas = doc.deltas;
      this.log = doc.log;
      this.steps = doc.steps || null; // live only: the step of each frame
      this.current = null;
      this.currentIndex = -1;
    }
    get count() {
      return this.first + this.deltas.length;
    }
    has(index) {
      return index >= this.first;
    }
    append(part) {
      this.keyframes.push(...part.keyframes);
      this.deltas.push(...part.deltas);
      this.log.push(...part.log);
      if (this.steps) this.steps.push(...part.steps);
    }
    stepOf(index) {
      return this.steps ? this.steps[index] : this.base + index;
    }
    /* the frame showing the position after `step` (live: the last at or before it) */
    frameOf(step) {
      if (!this.steps) return step - this.base;
      let index = 0;
      while (index + 1 < this.steps.length && this.steps[index + 1] <= step) index++;
      return index;
    }
    /* [step, seat, events] of each step that led to frame `index` */
    entries(index) {
      if (!this.steps) return [[this.base + index, ...(this.log[index - this.first] || [null, []])]];
      const list = this.log[index] || [];
      const first = this.steps[index] - list.length + 1;
      return list.map(([seat, events], i) => [first + i, seat, events]);
    }
    /* [seat, events] of the last step that led to frame `index` (what the drawer marks) */
    lastEntry(index) {
      return this.steps ? (this.log[index] || []).at(-1) : this.log[index - this.first];
    }
    view(index) {
      const from = this.currentIndex;
      if (!(from >= 0 && index >= from && index - from < this.every)) {
        const k = Math.floor((index - this.first) / this.every);
        this.current = structuredClone(this.keyframes[k]);
        this.currentIndex = this.first + k * this.every;
      }
      for (let i = this.currentIndex + 1; i <= index; i++) applyDelta(this.current, this.deltas[i - this.first]);
      this.currentIndex = index;
      return this.current;
    }
  }

  let frames = null;
  let shown = 0;
  let playing = false;
  let following = mode === "live"; // a live view keeps to the latest frame until moved
  let lastTick = 0;
  let owed = 0;
  let waiting = null; // the status line a frame not loaded yet replaced: back once one is drawn
  let earlier = "Loading earlier steps…"; // what a frame before the tail says meanwhile

  function show(index) {
    if (!frames) return;
    index = Math.max(0, Math.min(frames.count - 1, index));
    shown = index;
    slider.max = String(frames.count - 1);
    slider.value = String(index);
    counter.textContent = counterText();
    if (!frames.has(index)) {
      // drawn when every frame is in (start); the board shown is greyed, the log empty
      if (waiting === null) waiting = status.textContent;
      status.textContent = earlier;
      logList.replaceChildren();
      root.dataset.waiting = "true";
      return;
    }
    if (waiting !== null) status.textContent = waiting;
    waiting = null;
    delete root.dataset.waiting;
    const view = frames.view(index);
    drawer.draw(view, frames.lastEntry(index), context);
    drawLog(index);
    root.dataset.step = String(frames.stepOf(index));
  }

  function counterText() {
    return `step ${frames.stepOf(shown)} of ${frames.stepOf(frames.count - 1)}`;
  }

  /* the log of the steps up to the one shown, the latest first (never a step after it:
     that would tell what comes next): the frame's own steps, then LOG_BEFORE more */
  function drawLog(index) {
    const rows = [];
    for (let i = Math.max(frames.first, index - LOG_BEFORE); i <= index; i++) {
      for (const entry of frames.entries(i)) rows.push([i, ...entry]);
    }
    const own = rows.filter((row) => row[0] === index).length;
    const element = (tag, className, ...content) => {
      const node = document.createElement(tag);
      node.className = className;
      node.append(...content);
      return node;
    };
    const items = rows
      .slice(-Math.max(own, LOG_BEFORE + 1))
      .reverse()
      .map(([i, step, seat, events], n) => {
        const lines = events.map((event) => element("div", "event", drawer.describe(event, context)));
        if (!lines.length) lines.push(element("div", "event muted", "(nothing public)"));
        const who = seat === null || seat === undefined ? "" : context.owners[seat].label;
        const item = element(
          "li",
          i === index ? "current" : "",
          element("span", "step", String(step)),
          element("span", "who", who),
          element("div", "events", ...lines)
        );
        if (n === 0) item.setAttribute("aria-current", "step");
        return item;
      });
    logList.replaceChildren(...items);
  }

  function setPlaying(on) {
    playing = on && frames !== null;
    playButton.textContent = playing ? "Pause" : "Play";
    if (playing) {
      if (shown >= frames.count - 1 && mode !== "live") show(0);
      lastTick = performance.now();
      owed = 0;
      requestAnimationFrame(tick);
    }
  }

  function tick(now) {
    if (!playing) return;
    if (!frames.has(shown)) {
      lastTick = now; // it plays on once the earlier steps are in
      return requestAnimationFrame(tick);
    }
    const speed = Number($("[data-speed]").value);
    owed += ((now - lastTick) / 1000) * speed;
    lastTick = now;
    if (owed >= 1) {
      const steps = Math.floor(owed);
      owed -= steps;
      show(shown + steps);
      if (shown >= frames.count - 1 && mode !== "live") return setPlaying(false);
    }
    requestAnimationFrame(tick);
  }

  function go(where) {
    if (!frames) return;
    following = false;
    if (where === "play") return setPlaying(!playing);
    setPlaying(false);
    const target = { first: 0, prev: shown - 1, next: shown + 1, last: frames.count - 1 }[where];
    if (where === "last") following = mode === "live";
    show(target);
  }

  controls.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-go]");
    if (button) go(button.dataset.go);
  });
  slider.addEventListener("input", () => {
    following = false;
    setPlaying(false);
    show(Number(slider.value));
  });
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target.tagName === "SELECT" || target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "checkbox");
    const pressing = event.key === " " && (target.tagName === "BUTTON" || target.tagName === "INPUT");
    if (typing || pressing || event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last", " ": "play" };
    if (keys[event.key]) {
      event.preventDefault();
      go(keys[event.key]);
    }
  });

  // a way a match ends in words ("turn_limit": "turn limit reached"), as the server says it
  const endings = JSON.parse(root.dataset.endings || "{}");
  const ending = (reason) => endings[reason] || String(reason || "").replaceAll("_", " ");
  const context = { owners: [], board: {}, players: [], root, mode, reveal: false, ending };
  window.ArenaViewer.show = (step) => {
    following = false;
    setPlaying(false);
    show(frames ? frames.frameOf(step) : step);
  };

  function start(doc, at) {
    frames = new Frames(doc);
    context.board = doc.board;
    context.players = doc.players;
    context.owners = drawer.owners ? drawer.owners(doc) : doc.players.map((label) => ({ label }));
    context.reveal = !!doc.reveal;
    controls.hidden = false;
    $("[data-log-box]").hidden = false;
    show(at === undefined ? frames.count - 1 : at);
    window.ArenaViewer.readyAt ??= performance.now(); // since the page was asked for
    root.dataset.ready = "true";
  }

  /* --- a replay: a long one's tail first, then every frame ---------------------------- */

  let asked = 0; // frames asked for: an answer that a later request overtook is dropped

  async function fetchFrames(query) {
    const ask = ++asked;
    const answer = await fetch(`/api/matches/${encodeURIComponent(matchId)}/frames${query}`);
    const doc = await answer.json().catch(() => ({}));
    if (ask !== asked) return null;
    if (answer.ok) return doc;
    status.textContent = `The viewer could not load the frames: ${doc.detail || answer.statusText}`;
    earlier = status.textContent;
    waiting = null;
    return null;
  }

  const AT_THE_END = "The end of the match. Step through it with the controls or the arrow keys.";

  async function loadReplay(reveal) {
    const tail = frames ? 0 : Number(root.dataset.first || 0); // where the page's frames start
    if (tail) {
      const doc = await fetchFrames(`?since=${tail}`);
      if (!doc) return;
      start(doc);
      status.textContent = AT_THE_END;
    }
    const doc = await fetchFrames(reveal ? "?reveal=true" : "");
    if (!doc) return;
    const at = frames ? shown : undefined; // the frame shown (or waited for) stays
    start(doc, at);
    window.ArenaViewer.completeAt ??= performance.now(); // every frame is in
    if (at === undefined) status.textContent = AT_THE_END;
  }

  /* --- a live match: frames pushed by the server as they are played ----------------- */

  function watch() {
    status.textContent = "Connecting to the match…";
    const source = new EventSource(`/api/matches/${encodeURIComponent(matchId)}/live`);
    source.addEventListener("start", (event) => {
      start(JSON.parse(event.data));
      status.textContent = "Live: the position as any spectator sees it (public facts only), updated as the match is played.";
    });
    source.addEventListener("frames", (event) => {
      if (!frames) return;
      frames.append(JSON.parse(event.data));
      if (following) show(frames.count - 1);
      else {
        slider.max = String(frames.count - 1);
        counter.textContent = counterText();
      }
    });
    source.addEventListener("end", async (event) => {
      const end = JSON.parse(event.data);
      source.close();
      root.dataset.ended = "true";
      status.textContent =
        end.status === "finished" || !end.status
          ? `The match has ended (${ending(end.reason)}).`
          : end.status === "aborted"
            ? "The match was aborted before its end: it is played again from the start."
            : `The match ended without a result (${end.status}).`;
      // the referee stores the result just after: wait for the store to say so
      for (let tries = 0; tries < 60; tries++) {
        const answer = await fetch(`/api/matches/${encodeURIComponent(matchId)}`);
        const match = answer.ok ? await answer.json() : null;
        if (match && match.status !== "running") {
          const link = document.createElement("a");
          link.href = window.location.pathname;
          link.textContent = match.replay_available ? "See its replay." : "See its result.";
          status.append(" ", link);
          if (match.replay_hidden) status.append(` (The replay is hidden for now: ${match.replay_hidden}.)`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    });
    source.addEventListener("problem", (event) => {
      source.close();
      status.textContent = JSON.parse(event.data).detail;
      root.dataset.ended = "true";
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED && !root.dataset.ended) {
        status.textContent = "The live stream stopped. Reload the page to try again.";
      }
    };
  }

  const reveal = $("[data-reveal]");
  if (reveal) reveal.addEventListener("change", () => loadReplay(reveal.checked));

  if (mode === "replay") loadReplay(false);
  else if (mode === "live") watch();
})();
