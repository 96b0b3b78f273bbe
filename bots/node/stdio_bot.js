#!/usr/bin/env node
// An Arena bot in Node.js over stdin/stdout: no gRPC, no npm package, only Node itself.
// One JSON message a line each way, the gRPC protocol's own messages in protobuf's JSON
// form (docs/protocol.md, "The stdio protocol"): it says Hello, is sent Welcome and
// MatchStarted, answers each DecisionRequest with an ActionReply, and exits once its
// MatchEnded comes. Its decisions are bot.js's (decide.js). What it logs goes to stderr:
// stdout is the protocol's.
//
//   arena play risk --players ./stdio_bot.js,... is not how it runs: a host starts it
//   for one match (a hosted bot's manifest says `node stdio_bot.js`; see docs/hosting.md)
"use strict";

const readline = require("readline");
const { decideRisk, decideStratego } = require("./decide");

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function main() {
  let game = "";
  send({ hello: { client: "arena-node-stdio-bot/0.1" } });
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    const message = JSON.parse(line);
    if (message.match_started) {
      game = message.match_started.game;
      console.error(`match ${message.match_started.match_id}: ${game}, seat ${message.match_started.seat || 0}`);
    } else if (message.decision) {
      const d = message.decision;
      const options = JSON.parse(d.options_json);
      const action = game === "risk" ? { risk: decideRisk(d.kind, options) }
        : { stratego: decideStratego(d.kind, options) };
      // request_id is a 64-bit integer: a JSON string, sent back as it came
      send({ action: { match_id: d.match_id, request_id: d.request_id, action } });
    } else if (message.rejected) {
      console.error(`rejected: ${message.rejected.reason}`);
    } else if (message.match_ended) {
      const r = message.match_ended.result;
      console.error(`ended: ${r.reason} ${JSON.stringify(r.places || [])}`);
      lines.close();
    }
  });
  lines.on("close", () => process.exit(0));
}

main();
