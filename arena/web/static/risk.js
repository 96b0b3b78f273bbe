/* Draws a Risk frame on the map the server drew (templates/viewer_risk.html): each
   territory's owner colour and armies, the side panel, the move of the step, and
   describes events for the log. Every number comes from the frame. */
"use strict";

window.ArenaViewer = window.ArenaViewer || { drawers: {} };

(function () {
  const SVG = "http://www.w3.org/2000/svg";

  function owners(doc) {
    const rows = document.querySelectorAll("#viewer tr[data-owner]");
    return Array.from(rows, (row) => ({
      label: row.querySelector(".name").textContent,
      colour: row.querySelector(".swatch").dataset.colour,
    }));
  }

  function percent(p) {
    if (p === null || p === undefined) return "";
    if (p > 0 && p < 0.001) return "<0.1%";
    if (p < 1 && p > 0.999) return ">99.9%";
    return `${(100 * p).toFixed(1)}%`;
  }

  function territoryName(context, t) {
    return (context.board.territories[t] || String(t)).replaceAll("-", " ");
  }

  function ownerName(context, p) {
    const o = context.owners[p];
    return o ? o.label : `owner ${p}`;
  }

  /* one roll's code: 3 x attacker losses + defender losses (docs/replay-format.md) */
  function rollText(code) {
    const value = Number(code);
    return `−${Math.floor(value / 3)}/−${value % 3}`;
  }

  function battle(event, context) {
    const text = document.createDocumentFragment();
    const rolls = event.rolls.length;
    text.append(
      `attacks ${territoryName(context, event.to)} from ${territoryName(context, event.from)} ` +
        `with up to ${event.dice} ${event.dice === 1 ? "die" : "dice"}: ${rolls} roll${rolls === 1 ? "" : "s"}, ` +
        `losing ${event.att_loss} against ${event.def_loss}`
    );
    const detail = document.createElement("span");
    detail.className = "rolls";
    const shownRolls = event.faces ? event.faces.split(" ") : Array.from(event.rolls, rollText);
    detail.textContent = shownRolls.length > 12 ? `${shownRolls.slice(0, 12).join(" ")} …` : shownRolls.join(" ");
    detail.title = "each roll: attacker losses / defender losses (with dice=faces: the faces)";
    text.append(" ", detail);
    const odds = event.odds;
    if (odds && odds.capture !== null && odds.capture !== undefined) {
      const chance = document.createElement("span");
      chance.className = "odds";
      let plan = "if pressed to the end";
      if (odds.stop === odds.armies) plan = "in one roll";
      else if (odds.stop === 1) plan = "pressing on to the end";
      else if (odds.stop !== null) plan = `rolling until ${odds.stop} armies are left`;
      chance.textContent = `${percent(odds.capture)} to capture ${plan}, ${odds.armies} armies against ${odds.defenders}`;
      chance.title = "the exact chance the attack had when it began (the defender rolling the most dice allowed)";
      text.append(" ", chance);
    }
    return text;
  }

  function describe(event, context) {
    const who = event.p !== undefined ? ownerName(context, event.p) : "";
    const t = (key) => territoryName(context, event[key]);
    switch (event.e) {
      case "deal":
        return `${who} is dealt ${event.t.length} territories`;
      case "claim":
        return `${who} claims ${t("t")}`;
      case "place":
        return `${who} places an army on ${t("t")}`;
      case "turn":
        return `turn ${event.turn} (round ${event.round}): ${who} plays`;
      case "reinforcements":
        return `${who} gets ${event.total} armies (${event.breakdown.map(([why, n]) => `${why} ${n}`).join(", ")})`;
      case "trade":
        return `${who} trades a set for ${event.value} armies` + (event.bonus !== undefined && event.bonus !== null ? `, +2 on ${t("bonus")}` : "");
      case "reinforce":
        return `${who} places ` + event.armies.map(([where, n]) => `${n} on ${territoryName(context, where)}`).join(", ");
      case "battle": {
        const line = document.createDocumentFragment();
        line.append(`${who} `, battle(event, context));
        return line;
      }
      case "conquer":
        return `${who} takes ${t("to")} from ${ownerName(context, event.prev)}`;
      case "eliminate":
        return `${who} is eliminated by ${ownerName(context, event.by)}` + (event.cards ? ` (${event.cards} cards taken)` : "");
      case "move_in":
        return `${who} moves ${event.armies} into ${t("to")}`;
      case "fortify":
        return `${who} fortifies ${t("to")} with ${event.armies} from ${t("from")}`;
      case "draw":
        return `${who} draws a card`;
      case "reshuffle":
        return "the traded cards are shuffled into a new draw pile";
      case "forfeit":
        return `${who} is removed by the referee (forfeit)`;
      case "missions_dealt":
        return `a secret mission is dealt to each player`;
      case "missions":
        return `the missions are revealed`;
      case "neutral_place":
        return `${who} places ` + event.armies.map(([where, n]) => `${n} on ${territoryName(context, where)}`).join(", ") +
          (event.neutral !== undefined && event.neutral !== null ? `, 1 neutral on ${t("neutral")}` : "");
      case "headquarters_picked":
        return `${who} picks a headquarters (secret until all have)`;
      case "headquarters":
        return "headquarters revealed: " + event.hq.map((where, seat) => `${ownerName(context, seat)} ${territoryName(context, where)}`).join(", ");
      case "game_over":
        return `game over (${context.ending(event.reason)})`;
      default: {
        const { e, ...rest } = event;
        return `${e} ${JSON.stringify(rest)}`;
      }
    }
  }

  function line(overlay, from, to, className) {
    const a = document.querySelector(`#viewer g.territory[data-t="${from}"]`);
    const b = document.querySelector(`#viewer g.territory[data-t="${to}"]`);
    if (!a || !b) return;
    const [x1, y1] = a.getAttribute("transform").match(/[-\d.]+/g).map(Number);
    const [x2, y2] = b.getAttribute("transform").match(/[-\d.]+/g).map(Number);
    const width = Number(document.querySelector("#viewer svg.map-pieces").viewBox.baseVal.width);
    const segment = document.createElementNS(SVG, "line");
    // a move across the map's edge (Alaska-Kamchatka) is drawn leaving by the edge
    const wraps = Math.abs(x1 - x2) > width / 2;
    const x2w = wraps ? (x1 < x2 ? x2 - width : x2 + width) : x2;
    segment.setAttribute("x1", x1);
    segment.setAttribute("y1", y1);
    segment.setAttribute("x2", x2w);
    segment.setAttribute("y2", y2);
    segment.setAttribute("class", className);
    overlay.append(segment);
  }

  function draw(view, logEntry, context) {
    const root = context.root;
    for (const node of root.querySelectorAll("g.territory")) {
      const t = Number(node.dataset.t);
      const owner = view.owner[t];
      const armies = view.armies[t];
      if (node.dataset.owner !== String(owner)) {
        node.dataset.owner = String(owner);
        node.querySelector("circle.node").setAttribute("fill", owner >= 0 ? context.owners[owner].colour : "#ffffff");
      }
      if (node.dataset.armies !== String(armies)) {
        node.dataset.armies = String(armies);
        node.querySelector("text.armies").textContent = owner >= 0 ? String(armies) : "";
      }
      const capital = node.querySelector("text.capital");
      const seat = view.headquarters ? view.headquarters.indexOf(t) : -1; // whose headquarters
      capital.setAttribute("visibility", seat >= 0 ? "visible" : "hidden");
      if (seat >= 0) capital.setAttribute("fill", context.owners[seat].colour);
    }
    const overlay = root.querySelector("[data-overlay]");
    overlay.replaceChildren();
    for (const event of (logEntry && logEntry[1]) || []) {
      if (event.e === "battle") line(overlay, event.from, event.to, "attack");
      else if (event.e === "fortify") line(overlay, event.from, event.to, "fortify");
    }
    for (const row of root.querySelectorAll("tr[data-owner]")) {
      const i = Number(row.dataset.owner);
      const cell = (key) => row.querySelector(`[data-k="${key}"]`);
      cell("territories").textContent = view.territories[i];
      cell("armies").textContent = view.strength[i];
      cell("cards").textContent = view.cards[i];
      cell("continents").textContent = context.board.continents
        .filter((c, index) => view.continents[index] === i)
        .map((c) => c.name)
        .join(", ");
      row.classList.toggle("out", i < view.alive.length && !view.alive[i]);
      row.classList.toggle("to-move", i === view.player && view.phase !== "game_over");
    }
    const turn = root.querySelector("[data-turn]");
    turn.textContent =
      view.phase === "game_over"
        ? `Game over · turn ${view.turn}, round ${view.round}`
        : `Turn ${view.turn}, round ${view.round} · ${ownerName(context, view.player)} to move (${view.phase.replaceAll("_", " ")})`;
    const missions = root.querySelector("[data-missions]");
    missions.hidden = !view.missions;
    if (view.missions) {
      const list = missions.querySelector("ul");
      list.replaceChildren(
        ...view.missions.map((text, seat) => {
          const item = document.createElement("li");
          item.textContent = `${ownerName(context, seat)}: ${text}`;
          return item;
        })
      );
    }
  }

  window.ArenaViewer.drawers.risk = { draw, describe, owners };
})();
