#!/usr/bin/env node
// An Arena bot in Node.js: connects out to a referee over gRPC and plays random legal
// decisions in Risk (every variant) and Stratego. It shows the whole conversation a
// bot in any language has with the referee; see docs/protocol.md.
//
//   node bot.js --referee 127.0.0.1:50051 --token TOKEN [--matches N]
//   node bot.js --referee 127.0.0.1:50051 --register-as NAME   (registers first; containers)
//   node bot.js --referee 127.0.0.1:50051 --register-as NAME --token-file PATH
//     (registers on the first start only: the token is kept in PATH for the next ones)
//   ... --register-as NAME --key KEY   (a referee whose registration is closed)
"use strict";

const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

function parseArgs(argv) {
  const args = {
    referee: "127.0.0.1:50051", token: "", matches: 0, "register-as": "", "token-file": "",
    key: "",
  };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args)) throw new Error(`unknown option --${key}`);
    args[key] = key === "matches" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.token && !args["register-as"] && !args["token-file"]) {
    throw new Error(
      "--token is required (from `arena bot register NAME`), or --token-file, or --register-as NAME");
  }
  return args;
}

// The token kept by an earlier start in --token-file ("" if there is none yet).
function savedToken(file) {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch (err) {
    if (err.code === "ENOENT") return "";
    throw err;
  }
}

// A new file beside --token-file, made before registering: a path that cannot be written
// fails before a bot version exists (a container restarting in a loop would register one
// at every start). "wx" never opens a file that is already there.
function reserveTokenFile(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = path.join(
    path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  return { partial, fd: fs.openSync(partial, "wx", 0o600) };
}

// Keep the token for the next start: readable by its owner only, written whole or not at all.
function keepToken(file, reserved, token) {
  fs.writeSync(reserved.fd, `${token}\n`);
  fs.fsyncSync(reserved.fd);
  fs.closeSync(reserved.fd);
  fs.renameSync(reserved.partial, file);
}

function dropReserved(reserved) {
  try {
    fs.closeSync(reserved.fd);
    fs.unlinkSync(reserved.partial);
  } catch (err) {
    // already gone: nothing to clean up
  }
}

const { decideRisk, decideStratego } = require("./decide");

// RegisterBot on the arena service, waiting (up to two minutes) for the referee to be up.
function register(arena, args, done, failed, deadline = Date.now() + 120000) {
  const service = new arena.ArenaService(args.referee, grpc.credentials.createInsecure());
  // a start with no token to reuse registers a new version, as --register-as says
  const request = {
    name: args["register-as"], registration_key: args.key, games: ["risk", "stratego"],
    new_version: true,
  };
  service.RegisterBot(request, { deadline: Date.now() + 10000 }, (err, reply) => {
    service.close();
    if (!err) {
      console.log(`registered ${reply.name} version ${reply.version}`);
      done(reply.token);
    } else if (err.code === grpc.status.UNAVAILABLE && Date.now() < deadline) {
      setTimeout(() => register(arena, args, done, failed, deadline), 1000);
    } else {
      console.error(`referee: ${err.details || err.message}`);
      process.exitCode = 1;
      failed();
    }
  });
}

function main() {
  const args = parseArgs(process.argv);
  const protoDir = path.resolve(__dirname, "..", "..", "arena", "proto");
  const definition = protoLoader.loadSync(path.join(protoDir, "arena", "v1", "arena.proto"), {
    keepCase: true, longs: Number, enums: String, defaults: false, oneofs: true,
    includeDirs: [protoDir],
  });
  const arena = grpc.loadPackageDefinition(definition).arena.v1;
  if (!args.token && args["token-file"]) {
    args.token = savedToken(args["token-file"]);
    args.fromFile = Boolean(args.token);
  }
  if (args.token) {
    play(arena, args);
  } else if (args["register-as"]) {
    const reserved = args["token-file"] ? reserveTokenFile(args["token-file"]) : null;
    register(arena, args, (token) => {
      if (reserved) keepToken(args["token-file"], reserved, token);
      play(arena, { ...args, token });
    }, () => {
      if (reserved) dropReserved(reserved);
    });
  } else {
    throw new Error(`${args["token-file"]} holds no token: give --register-as NAME to register`);
  }
}

function play(arena, args) {
  const client = new arena.BotService(args.referee, grpc.credentials.createInsecure());
  const stream = client.Connect();
  const games = new Map();  // match id -> game name
  let finished = 0;

  // batches: true asks the referee to send what it has queued for this bot as one
  // RefereeBatch; the replies to a batch then go back as one BotBatch (docs/protocol.md).
  stream.write({
    hello: { token: args.token, client: "arena-node-bot/0.1", max_matches: 16, batches: true },
  });
  let maxBatch = 0;  // from the Welcome: how many messages a BotBatch may hold
  const batches = { received: 0, sent: 0 };
  let leaving = false;  // true once this bot ends the stream itself (--matches played)

  // One message from the referee; a decision's reply goes to `replies`.
  function handle(message, replies) {
    if (message.welcome) {
      maxBatch = message.welcome.batches ? message.welcome.max_batch : 0;
      console.log(`connected as ${message.welcome.bot_name} v${message.welcome.version}`);
    } else if (message.match_started) {
      games.set(message.match_started.match_id, message.match_started.game);
    } else if (message.decision) {
      const d = message.decision;
      const game = games.get(d.match_id);
      const options = JSON.parse(d.options_json);
      const action = game === "risk" ? { risk: decideRisk(d.kind, options) }
        : { stratego: decideStratego(d.kind, options) };
      replies.push({ action: { match_id: d.match_id, request_id: d.request_id, action } });
    } else if (message.rejected) {
      console.error(`rejected: ${message.rejected.reason}`);
    } else if (message.match_ended) {
      const r = message.match_ended.result;
      console.log(`match ${message.match_ended.match_id} ended: ${r.reason} ${JSON.stringify(r.places)}`);
      games.delete(message.match_ended.match_id);
      finished += 1;
      return args.matches && finished >= args.matches;  // true: this bot is done
    }
    return false;
  }

  // Replies go out in batches of at most maxBatch; a batch's replies leave together
  // unless deciding them takes over 20 ms (then what is decided goes at once).
  function send(replies) {
    const size = Math.max(1, maxBatch);
    for (let i = 0; i < replies.length; i += size) {
      const chunk = replies.slice(i, i + size);
      stream.write(chunk.length === 1 ? chunk[0] : { batch: { messages: chunk } });
      if (chunk.length > 1) batches.sent += 1;
    }
  }

  stream.on("data", (message) => {
    let replies = [];
    let done = false;
    let started = Date.now();
    if (message.batch) batches.received += 1;
    for (const item of message.batch ? message.batch.messages : [message]) {
      if (handle(item, replies)) {
        done = true;
        break;
      }
      if (replies.length && Date.now() - started > 20) {
        send(replies);
        replies = [];
        started = Date.now();
      }
    }
    send(replies);
    if (done) {
      console.log(`batches: received ${batches.received}, sent ${batches.sent}`);
      leaving = true;
      stream.end();
      client.close();
    }
  });
  // Every way out says why in one line: a bot that stops in silence looks like a crash.
  stream.on("error", (err) => {
    if (leaving && err.code === grpc.status.CANCELLED) return;
    leaving = true;  // the "end" that may follow has nothing more to say
    const refused = [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED];
    if (err.code === grpc.status.UNAVAILABLE) {
      const why = (err.details || "").split(".")[0];  // grpc-js adds a long tail
      console.error(`referee ${args.referee} is gone or not there (${why}); exiting`);
    } else if (refused.includes(err.code) && !args.fromFile) {
      console.error(`referee refused the token (${err.details}): revoked, or issued by a ` +
        "referee with another store; register again for a new one");
    } else {
      console.error(`referee ended the connection: ${grpc.status[err.code]}: ${err.details}`);
    }
    if (args.fromFile && refused.includes(err.code)) {
      const then = args["register-as"] ? "remove the file to register a new version"
        : "give it a token that this referee accepts";
      console.error(`the token in ${args["token-file"]} was refused (revoked, or issued by a ` +
        `referee with another store): ${then}`);
    }
    process.exitCode = 1;
  });
  stream.on("end", () => {
    if (!leaving) {
      console.error("referee closed the connection (it is shutting down); exiting");
      process.exitCode = 1;
    }
    client.close();
  });
}

try {
  main();
} catch (err) {  // bad options, a token file that cannot be read or written
  console.error(`bot.js: ${err.message}`);
  process.exitCode = 2;
}
