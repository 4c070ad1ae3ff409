#!/usr/bin/env node
// Decodes the codec benchmark corpus with the npm Teltonika parsers and prints their
// throughput as JSON, for scripts/bench-codecs to set against the tgw decoder.
//
// The corpus file comes from the write_corpus tool: one TCP AVL frame per line,
//   <set> <records> <io_elements> <first_timestamp_ms> <first_latitude> <hex>
// Each parser first decodes a sample of a set's frames and must get the records, the
// IO elements, the first timestamp and the first latitude right; a parser that fails
// on a set is reported as not supporting it (with the reason) and is not timed there.
// Timing then runs a warm-up and a measured loop over the set's frames in turn. Rates
// are per second of CPU time of the node process, as Google Benchmark reports CPU time.
'use strict';

const fs = require('fs');

const usage = `usage: decode_npm.js CORPUS [--seconds S] [--warmup S] [--sets 8E,8,16,stress]

Decodes the frames of CORPUS (written by write_corpus) with complete-teltonika-parser
and teltonika-parser and prints a JSON report on stdout.
  --seconds S  measured time per parser and set (default 3)
  --warmup S   untimed decoding before each measurement (default 1)
  --sets LIST  the corpus sets to decode (default 8E,8,16,stress)
`;

function parseArgs(argv) {
  const opts = { corpus: null, seconds: 3, warmup: 1, sets: ['8E', '8', '16', 'stress'] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--help' || a === '-h') {
      process.stdout.write(usage);
      process.exit(0);
    } else if (a === '--seconds') {
      opts.seconds = Number(value());
    } else if (a === '--warmup') {
      opts.warmup = Number(value());
    } else if (a === '--sets') {
      opts.sets = value().split(',');
    } else if (!a.startsWith('-') && opts.corpus === null) {
      opts.corpus = a;
    } else {
      throw new Error(`unknown argument ${a}`);
    }
  }
  if (opts.corpus === null) throw new Error('no corpus file given');
  if (!(opts.seconds > 0) || !(opts.warmup >= 0)) throw new Error('bad --seconds or --warmup');
  return opts;
}

function readCorpus(file) {
  const sets = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [set, records, io, timestamp, latitude, hex] = line.split(' ');
    if (!sets.has(set)) sets.set(set, []);
    sets.get(set).push({
      buffer: Buffer.from(hex, 'hex'),
      records: Number(records),
      io: Number(io),
      timestamp: Number(timestamp),
      latitude: Number(latitude),
    });
  }
  return sets;
}

// What a parser made of a frame, in one shape for the check.
function summary(records, ioOf, timestampOf, latitudeOf) {
  if (!Array.isArray(records) || records.length === 0) return { records: 0 };
  let io = 0;
  for (const r of records) io += ioOf(r);
  return {
    records: records.length,
    io,
    timestamp: timestampOf(records[0]),
    latitude: Math.round(latitudeOf(records[0]) * 1e7),
  };
}

const parsers = [
  {
    name: 'complete-teltonika-parser',
    // Takes the frame as a hex string; the conversion from the socket's Buffer is
    // part of what a server pays to use it, so it is inside the timed loop.
    load() {
      const { ProtocolParser } = require('complete-teltonika-parser');
      return (buffer) => new ProtocolParser(buffer.toString('hex'));
    },
    summarize(parsed) {
      const records = parsed.Content && parsed.Content.AVL_Datas;
      return summary(
        records,
        (r) => Object.keys(r.IOelement.Elements).length,
        (r) => r.Timestamp.getTime(),
        (r) => r.GPSelement.Latitude,
      );
    },
  },
  {
    name: 'teltonika-parser',
    load() {
      const Parser = require('teltonika-parser');
      return (buffer) => new Parser(buffer);
    },
    summarize(parsed) {
      const avl = parsed.getAvl();
      return summary(
        avl.records,
        (r) => r.ioElements.length,
        (r) => r.timestamp.getTime(),
        (r) => r.gps.latitude,
      );
    },
  },
];

function version(name) {
  return require(`${name}/package.json`).version;
}

// The frames the check decodes: at most `limit`, spread over the set, first and
// last included (one parser needs several milliseconds per frame).
function sample(frames, limit) {
  if (frames.length <= limit) return frames.map((_, i) => i);
  const picked = [];
  for (let k = 0; k < limit; ++k)
    picked.push(Math.round((k * (frames.length - 1)) / (limit - 1)));
  return picked;
}

// Decodes a sample of the frames and compares with what the encoder put in.
function check(parser, decode, frames) {
  for (const i of sample(frames, 100)) {
    const f = frames[i];
    let got;
    try {
      got = parser.summarize(decode(f.buffer));
    } catch (e) {
      return `frame ${i}: threw "${String(e && e.message ? e.message : e).slice(0, 120)}"`;
    }
    if (got.records !== f.records)
      return `frame ${i}: ${got.records} records decoded, ${f.records} sent`;
    if (got.io !== f.io) return `frame ${i}: ${got.io} IO elements decoded, ${f.io} sent`;
    if (got.timestamp !== f.timestamp)
      return `frame ${i}: first timestamp ${got.timestamp}, ${f.timestamp} sent`;
    if (got.latitude !== f.latitude)
      return `frame ${i}: first latitude ${got.latitude}, ${f.latitude} sent`;
  }
  return null;
}

function cpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

// Decodes the frames round and round until `seconds` of CPU time have gone by,
// reading the clock every few frames so that slow parsers stop on time too.
function run(decode, frames, seconds) {
  const stride = 16;
  let decoded = 0;
  let bytes = 0;
  let records = 0;
  let sink = 0;
  let next = 0;
  const wall0 = process.hrtime.bigint();
  const cpu0 = cpuSeconds();
  let cpu = 0;
  do {
    for (let k = 0; k < stride; ++k) {
      const f = frames[next];
      sink += decode(f.buffer) ? 1 : 0;
      bytes += f.buffer.length;
      records += f.records;
      next = next + 1 === frames.length ? 0 : next + 1;
    }
    decoded += stride;
    cpu = cpuSeconds() - cpu0;
  } while (cpu < seconds);
  const wall = Number(process.hrtime.bigint() - wall0) / 1e9;
  if (sink !== decoded) throw new Error('a decode returned nothing');
  return { decoded, bytes, records, cpu, wall };
}

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`decode_npm.js: ${e.message}\n${usage}`);
    process.exit(2);
  }
  const corpus = readCorpus(opts.corpus);
  const report = {
    node: process.version,
    seconds: opts.seconds,
    warmup: opts.warmup,
    rate_basis: 'cpu time of the node process',
    parsers: [],
  };
  for (const parser of parsers) {
    const decode = parser.load();
    const entry = { name: parser.name, version: version(parser.name), sets: {} };
    for (const name of opts.sets) {
      const frames = corpus.get(name);
      if (!frames) throw new Error(`the corpus has no set ${name}`);
      const fault = check(parser, decode, frames);
      if (fault !== null) {
        entry.sets[name] = { supported: false, reason: fault };
        process.stderr.write(`decode_npm.js: ${parser.name} cannot decode set ${name}: ${fault}\n`);
        continue;
      }
      if (opts.warmup > 0) run(decode, frames, opts.warmup);
      const t = run(decode, frames, opts.seconds);
      entry.sets[name] = {
        supported: true,
        frames_decoded: t.decoded,
        cpu_seconds: t.cpu,
        wall_seconds: t.wall,
        mb_per_s: t.bytes / t.cpu / 1e6,
        records_per_s: t.records / t.cpu,
        frames_per_s: t.decoded / t.cpu,
      };
      process.stderr.write(
        `decode_npm.js: ${parser.name} set ${name}: ` +
          `${entry.sets[name].mb_per_s.toFixed(2)} MB/s\n`,
      );
    }
    report.parsers.push(entry);
  }
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
}

main();
