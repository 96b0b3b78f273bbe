// The Node.js bots' decisions: random legal choices in Risk (every variant) and
// Stratego, from a decision's kind and its legal options (JSON, docs/risk.md and
// docs/stratego.md). Shared by bot.js (gRPC) and stdio_bot.js (stdin/stdout).
"use strict";

const pick = (xs) => xs[Math.floor(Math.random() * xs.length)];
const randint = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1));

function spread(armies, territories) {
  const placements = {};
  for (let i = 0; i < armies; i++) {
    const t = pick(territories);
    placements[t] = (placements[t] || 0) + 1;
  }
  return placements;
}

function decideRisk(kind, o) {
  switch (kind) {
    case "claim": return { type: "claim", territory: pick(o.territories) };
    case "setup_place": return { type: "place", territory: pick(o.territories) };
    case "trade":
      if (o.must_trade || Math.random() < 0.5) return { type: "trade", cards: pick(o.sets) };
      return { type: "no_trade" };
    case "reinforce": return { type: "reinforce", placements: spread(o.armies, o.territories) };
    case "attack": {
      if (o.attacks.length === 0 || Math.random() < 0.2) return { type: "end_attack" };
      const a = pick(o.attacks);
      return { type: "attack", from: a.from, to: a.to, dice: a.max_dice, until: 1 };
    }
    case "move_in": return { type: "move_in", armies: randint(o.min, o.max) };
    case "fortify": return { type: "end_turn" };
    case "defend": return { type: "defend", dice: o.max_dice };
    case "headquarters": return { type: "headquarters", territory: pick(o.territories) };
    case "neutral_place": {
      const action = { type: "place", placements: spread(o.armies, o.territories) };
      if (o.neutral) action.neutral = pick(o.neutral_territories);
      return action;
    }
    default: throw new Error(`unknown Risk decision ${kind}`);
  }
}

function decideStratego(kind, o) {
  switch (kind) {
    case "setup": {
      const squares = o.squares.slice().sort(() => Math.random() - 0.5);
      const army = [];
      for (const [name, n] of Object.entries(o.army)) for (let i = 0; i < n; i++) army.push(name);
      const placement = {};
      army.forEach((name, i) => { placement[squares[i]] = name; });
      return { type: "setup", placement };
    }
    case "move": {
      const [from, to] = pick(o.moves);
      return { type: "move", from, to };
    }
    case "rescue": return { type: "no_rescue" };
    default: throw new Error(`unknown Stratego decision ${kind}`);
  }
}

module.exports = { decideRisk, decideStratego };
