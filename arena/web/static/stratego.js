/* Draws a Stratego frame on the board the server drew (templates/viewer_stratego.html):
   every piece with its owner and, once revealed, its rank; the step's move or strike
   marked; the pieces each side has lost. A frame holds a rank only when the players
   could see it (or, with "show every rank", once the match has ended). */
"use strict";

window.ArenaViewer = window.ArenaViewer || { drawers: {} };

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const COLUMNS = "abcdefghij";
  let codes = null;

  function squareName(s) {
    return `${COLUMNS[s % 10]}${Math.floor(s / 10) + 1}`;
  }

  function owners() {
    const rows = document.querySelectorAll("#viewer tr[data-owner]");
    return Array.from(rows, (row) => ({
      label: row.querySelector(".name").textContent,
      colour: row.querySelector(".swatch").dataset.colour,
    }));
  }

  function describe(event, context) {
    const who = event.p !== undefined && context.owners[event.p] ? context.owners[event.p].label : "";
    switch (event.e) {
      case "setup":
        return `${who} sets up ${event.pieces} pieces`;
      case "move":
        return `${who} moves ${squareName(event.from)} → ${squareName(event.to)}`;
      case "strike": {
        const winner = { attacker: "the attacker wins", defender: "the defender wins", both: "both are removed" }[event.result] || event.result;
        return `${who}'s ${event.attacker} (${squareName(event.from)}) strikes the ${event.defender} on ${squareName(event.to)}: ${winner}`;
      }
      case "rescue":
        return `${who} rescues a ${event.rescue} onto ${squareName(event.square)}`;
      case "forfeit":
        return `${who} is removed by the referee (forfeit)`;
      case "game_over":
        return `game over (${context.ending(event.reason)})`;
      default: {
        const { e, ...rest } = event;
        return `${e} ${JSON.stringify(rest)}`;
      }
    }
  }

  function mark(group, square, className) {
    const piece = document.querySelector(`#viewer g.piece[data-s="${square}"]`);
    if (!piece) return;
    const [x, y] = piece.getAttribute("transform").match(/[-\d.]+/g).map(Number);
    const rect = document.createElementNS(SVG, "rect");
    rect.setAttribute("x", x - 3);
    rect.setAttribute("y", y - 3);
    rect.setAttribute("width", 50);
    rect.setAttribute("height", 50);
    rect.setAttribute("rx", 6);
    rect.setAttribute("class", className);
    group.append(rect);
  }

  function draw(view, logEntry, context) {
    const root = context.root;
    codes = codes || JSON.parse(root.querySelector("svg.stratego-board").dataset.codes);
    for (const piece of root.querySelectorAll("g.piece")) {
      const cell = view.board[Number(piece.dataset.s)];
      piece.setAttribute("visibility", cell ? "visible" : "hidden");
      if (!cell) {
        piece.dataset.owner = "";
        piece.dataset.rank = "";
        continue;
      }
      const [owner, rank, , revealed] = cell;
      piece.dataset.owner = String(owner);
      piece.dataset.rank = rank || "";
      piece.querySelector("rect").setAttribute("fill", context.owners[owner].colour);
      piece.querySelector("text").textContent = rank ? codes[rank] : "?";
      piece.classList.toggle("hidden", !rank);
      piece.classList.toggle("unrevealed", !!rank && !revealed); // shown by "show every rank"
    }
    const marks = root.querySelector("[data-marks]");
    marks.replaceChildren();
    for (const event of (logEntry && logEntry[1]) || []) {
      if (event.e === "move" || event.e === "strike") {
        mark(marks, event.from, "mark");
        mark(marks, event.to, event.e === "strike" ? "mark strike" : "mark");
      }
    }
    for (const row of root.querySelectorAll("tr[data-owner]")) {
      const i = Number(row.dataset.owner);
      row.querySelector('[data-k="lost"]').textContent = view.captured[i].length;
      row.classList.toggle("to-move", i === view.player && view.phase !== "game_over");
    }
    for (const lost of root.querySelectorAll("[data-lost]")) {
      const i = Number(lost.dataset.lost);
      lost.replaceChildren(
        ...view.captured[i].map((rank) => {
          const chip = document.createElement("span");
          chip.className = `seat${i}`;
          chip.title = rank;
          chip.textContent = codes[rank];
          return chip;
        })
      );
    }
    root.querySelector("[data-turn]").textContent =
      view.phase === "game_over"
        ? `Game over after ${view.ply} moves`
        : view.phase === "setup"
          ? `Setup: ${context.owners[view.player].label} places its pieces (hidden)`
          : `Move ${view.ply + 1} · ${context.owners[view.player].label} to move`;
  }

  window.ArenaViewer.drawers.stratego = { draw, describe, owners };
})();
