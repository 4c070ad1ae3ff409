#!/usr/bin/env node
// Prints the codec benchmark summary (a Markdown table and the bars) from the
// Google Benchmark JSON of codecs_bench and the JSON of npm/decode_npm.js.
// MB is 10^6 bytes. tgw figures are the median over the benchmark's repetitions.
'use strict';

const fs = require('fs');

const usage = `usage: summarize.js --bench CODECS_BENCH_JSON --npm DECODE_NPM_JSON

Prints per corpus set: tgw decode MB/s and records/s, memcpy MB/s of the same
frames, decode/memcpy, each npm parser's MB/s and tgw/npm; then the CRC and framer
figures and PASS/FAIL against the bars (8E decode >= 1000 MB/s on one core, and
>= 50 times the faster npm parser). Exits 0 whatever the bars say.
`;

const bars = { decode_8e_mb_per_s: 1000, npm_ratio: 50 };
const sets = ['8E', '8', '16', 'stress'];
const setLabels = {
  '8E': 'Codec 8E',
  '8': 'Codec 8',
  '16': 'Codec 16',
  stress: 'stress (large frames)',
};

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--help' || argv[i] === '-h') {
      process.stdout.write(usage);
      process.exit(0);
    } else if (argv[i] === '--bench' && i + 1 < argv.length) {
      opts.bench = argv[++i];
    } else if (argv[i] === '--npm' && i + 1 < argv.length) {
      opts.npm = argv[++i];
    } else {
      process.stderr.write(`summarize.js: unknown argument ${argv[i]}\n${usage}`);
      process.exit(2);
    }
  }
  if (!opts.bench || !opts.npm) {
    process.stderr.write(usage);
    process.exit(2);
  }
  return opts;
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Per benchmark name: median and best of the repetitions, whether the JSON holds the
// single runs or only the aggregates.
function benchFigures(report) {
  const runs = new Map();
  for (const b of report.benchmarks) {
    if (b.error_occurred) throw new Error(`${b.name}: ${b.error_message}`);
    const name = b.run_name || b.name;
    if (!runs.has(name)) runs.set(name, { single: [], median: null });
    const entry = runs.get(name);
    if (b.run_type === 'aggregate') {
      if (b.aggregate_name === 'median') entry.median = b;
    } else {
      entry.single.push(b);
    }
  }
  const figures = new Map();
  for (const [name, entry] of runs) {
    const pick = (key) => {
      if (entry.single.length > 0) return median(entry.single.map((b) => b[key] || 0));
      return entry.median ? entry.median[key] || 0 : 0;
    };
    const best = entry.single.length
      ? Math.max(...entry.single.map((b) => b.bytes_per_second || 0))
      : pick('bytes_per_second');
    figures.set(name, {
      mb_per_s: pick('bytes_per_second') / 1e6,
      best_mb_per_s: best / 1e6,
      records_per_s: pick('records/s'),
      frames_per_s: pick('frames/s'),
      repetitions: Math.max(entry.single.length, entry.median ? entry.median.repetitions : 1),
    });
  }
  return figures;
}

function fmt(x, digits = 1) {
  if (x >= 100) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(digits);
}

function fmtCount(x) {
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)} k`;
  return x.toFixed(0);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const bench = JSON.parse(fs.readFileSync(opts.bench, 'utf8'));
  const npm = JSON.parse(fs.readFileSync(opts.npm, 'utf8'));
  const figures = benchFigures(bench);
  const ctx = bench.context || {};
  const get = (name) => {
    const f = figures.get(name);
    if (!f) throw new Error(`no benchmark ${name} in ${opts.bench}`);
    return f;
  };

  const parserNames = npm.parsers.map((p) => `${p.name} ${p.version}`);
  const header = [
    'corpus',
    'frames',
    'avg frame',
    'tgw MB/s',
    'tgw records/s',
    'memcpy MB/s',
    'decode/memcpy',
  ];
  for (const name of parserNames) header.push(`${name} MB/s`, `tgw / ${name.split(' ')[0]}`);
  const lines = [];
  lines.push(`| ${header.join(' | ')} |`);
  lines.push(`|${header.map(() => '---').join('|')}|`);

  const notes = [];
  const ratios = new Map();  // set -> tgw / fastest npm parser that decodes it
  for (const set of sets) {
    const decode = get(`decode/${set}`);
    const copy = get(`copy/${set}`);
    const frames = Number(ctx[`corpus_${set}_frames`] || 0);
    const bytes = Number(ctx[`corpus_${set}_bytes`] || 0);
    const row = [
      setLabels[set],
      String(frames),
      frames ? `${Math.round(bytes / frames)} B` : '?',
      fmt(decode.mb_per_s),
      fmtCount(decode.records_per_s),
      fmt(copy.mb_per_s),
      (decode.mb_per_s / copy.mb_per_s).toFixed(3),
    ];
    let fastest = 0;
    for (const p of npm.parsers) {
      const r = p.sets[set];
      if (!r) {
        row.push('not run', '');
      } else if (!r.supported) {
        notes.push(`${p.name} cannot decode the ${setLabels[set]} set (${r.reason})`);
        row.push(`cannot decode (note ${notes.length})`, '');
      } else {
        fastest = Math.max(fastest, r.mb_per_s);
        row.push(fmt(r.mb_per_s, 2), `${fmt(decode.mb_per_s / r.mb_per_s, 0)}x`);
      }
    }
    if (fastest > 0) ratios.set(set, { ratio: decode.mb_per_s / fastest, fastest });
    lines.push(`| ${row.join(' | ')} |`);
  }

  const out = [];
  out.push(...lines);
  out.push('');
  for (let i = 0; i < notes.length; ++i) out.push(`${i + 1}. ${notes[i]}`);
  if (notes.length) out.push('');

  const crc = get('crc16');
  const framer = get('framer');
  const decode8e = get('decode/8E');
  out.push(`- crc16_ibm alone, over the AVL data of the 8E frames: ${fmt(crc.mb_per_s)} MB/s`);
  out.push(
    `- tcp_framer splitting the 8E, 8 and 16 frames sent back to back, in 1460-byte ` +
      `segments: ${fmt(framer.mb_per_s)} MB/s, ${fmtCount(framer.frames_per_s)} frames/s`,
  );
  out.push(
    `- tgw figures: median of ${decode8e.repetitions} repetitions, CPU time, one core; ` +
      `best 8E repetition ${fmt(decode8e.best_mb_per_s)} MB/s` +
      (ctx.load_avg ? `; load average at start ${ctx.load_avg.map((x) => x.toFixed(2)).join(' ')}` : ''),
  );
  out.push(`- npm figures: ${npm.node}, ${npm.seconds} s measured after ${npm.warmup} s warm-up, CPU time`);
  out.push('');

  const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
  out.push(
    `- Bar: 8E decode >= ${bars.decode_8e_mb_per_s} MB/s on one core: ` +
      `${verdict(decode8e.mb_per_s >= bars.decode_8e_mb_per_s)} (${fmt(decode8e.mb_per_s)} MB/s)`,
  );
  const basis = ratios.has('8E') ? '8E' : [...ratios.keys()][0];
  if (basis === undefined) {
    out.push(`- Bar: >= ${bars.npm_ratio}x the faster npm parser: no npm parser decoded any set`);
  } else {
    const { ratio, fastest } = ratios.get(basis);
    out.push(
      `- Bar: ${basis} decode >= ${bars.npm_ratio}x the faster npm parser (${fmt(fastest, 2)} MB/s): ` +
        `${verdict(ratio >= bars.npm_ratio)} (${fmt(ratio, 0)}x)`,
    );
    let lowest = null;
    for (const [set, r] of ratios) if (lowest === null || r.ratio < lowest.ratio) lowest = { set, ...r };
    if (lowest.set !== basis)
      out.push(`  (lowest over the sets an npm parser decodes: ${fmt(lowest.ratio, 0)}x, ${lowest.set})`);
  }
  process.stdout.write(out.join('\n') + '\n');
}

main();
