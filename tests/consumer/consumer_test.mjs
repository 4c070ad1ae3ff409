// A downstream consumer in JavaScript, whose JSON.parse reads every number as a double:
// it reads `tgw telemetry tail --json`, `tgw decode` and `tgw command watch --json`
// output from a real `tgw serve` and must get every 64-bit value and every NX byte
// exactly. Node's built-ins only. Usage: node consumer_test.mjs /path/to/tgw
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { u, frame as tcpFrame } from '../support/teltonika_frame.mjs';

const tgw = process.argv[2] ?? process.env.TGW_BINARY;
if (!tgw) throw new Error('usage: node consumer_test.mjs /path/to/tgw');
const run = promisify(execFile);

const imei = '356307042441013';
const two53plus1 = 2n ** 53n + 1n;
const times = [1700000000000n, two53plus1, 2n ** 63n, 2n ** 64n - 1n];
const nx11 = Buffer.from('9007199254740993', 'hex');  // hex all digits, on the 8-byte id
const nx66 = Buffer.from([0x12, 0x34]);
const reply = Buffer.from([0xc5, 0x01, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0x00, 0x5a]);



// Codec 8 Extended: per record IO 1 twice (0, 1), IO 72 = 3000 (a Dallas sensor not
// connected), IO 11 = 2^53 + 1 (8 bytes) and NX on 11 and 66.
function avlFrame() {
  const records = times.map((ts) => Buffer.concat([
    u(ts, 8), u(1, 1), u(252616688, 4), u(546992512, 4), u(105, 2), u(90, 2), u(12, 1),
    u(41, 2), u(0, 2), u(6, 2),
    u(2, 2), u(1, 2), u(0, 1), u(1, 2), u(1, 1),
    u(0, 2),
    u(1, 2), u(72, 2), u(3000, 4),
    u(1, 2), u(11, 2), u(two53plus1, 8),
    u(2, 2), u(11, 2), u(nx11.length, 2), nx11, u(66, 2), u(nx66.length, 2), nx66,
  ]));
  return tcpFrame(Buffer.concat([u(0x8e, 1), u(times.length, 1), ...records, u(times.length, 1)]));
}

function commandReply(payload) {
  const body = Buffer.concat([u(0x0c, 1), u(1, 1), u(0x06, 1), u(payload.length, 4), payload,
                              u(1, 1)]);
  return tcpFrame(body);
}

// A socket with a "read exactly n bytes" on top.
class Device {
  constructor(port) {
    this.buffered = Buffer.alloc(0);
    this.waiters = [];
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (d) => { this.buffered = Buffer.concat([this.buffered, d]); this.wake(); });
    this.opened = new Promise((ok, fail) => { this.socket.once('connect', ok); this.socket.once('error', fail); });
  }
  wake() {
    while (this.waiters.length && this.buffered.length >= this.waiters[0].n) {
      const { n, ok } = this.waiters.shift();
      const out = this.buffered.subarray(0, n);
      this.buffered = this.buffered.subarray(n);
      ok(out);
    }
  }
  read(n, ms = 10000) {
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no ${n} bytes within ${ms} ms`)), ms);
      this.waiters.push({ n, ok: (b) => { clearTimeout(timer); ok(b); } });
      this.wake();
    });
  }
  send(bytes) { this.socket.write(bytes); }
  close() { this.socket.destroy(); }
}

function freePort() {
  return new Promise((ok) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function eventually(check, ms = 20000) {
  const until = Date.now() + ms;
  for (;;) {
    try { return await check(); } catch (e) { if (Date.now() > until) throw e; }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Every number a double-based reader got must be exact: an integer beyond 2^53 would
// have been rounded on the way in, so none may appear anywhere.
function assertNoUnsafeNumber(value, where) {
  if (typeof value === 'number') {
    assert.ok(!Number.isInteger(value) || Number.isSafeInteger(value), `${where}: ${value}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoUnsafeNumber(v, `${where}[${i}]`));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) assertNoUnsafeNumber(v, `${where}.${k}`);
  }
}

const jsonLines = (text) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

const dir = mkdtempSync(path.join(os.tmpdir(), 'tgw-consumer-'));
const port = await freePort();
const common = ['--data-dir', dir];
const serve = spawn(tgw, ['serve', '--port', String(port), '--bind', '127.0.0.1',
                          '--metrics-addr', '', ...common], { stdio: 'ignore' });
const served = new Promise((ok) => serve.on('exit', (code) => ok(code)));
let watchOut = '';
let watch;

test.before(async () => {
  await eventually(async () => { const d = new Device(port); await d.opened; d.close(); });
});

test.after(async () => {
  if (watch) watch.kill('SIGTERM');
  serve.kill('SIGTERM');
  assert.equal(await served, 0);
  rmSync(dir, { recursive: true, force: true });
});

const device = { socket: null };

test('the gateway ACKs every record, the extreme times included', async () => {
  device.socket = new Device(port);
  await device.socket.opened;
  const id = Buffer.from(imei);
  device.socket.send(Buffer.concat([u(id.length, 2), id]));
  assert.deepEqual(await device.socket.read(1), Buffer.from([1]));
  device.socket.send(avlFrame());
  assert.deepEqual(await device.socket.read(4), u(times.length, 4));
});

function checkIo(io, where) {
  // [id, value] pairs in wire order: IO 1 twice, 72, 11 as an integer and as bytes, 66.
  assert.deepEqual(io.map((p) => p[0]), [1, 1, 72, 11, 11, 66], where);
  assert.deepEqual(io.slice(0, 3).map((p) => BigInt(p[1])), [0n, 1n, 3000n], where);
  assert.equal(typeof io[3][1], 'string', where);
  assert.equal(BigInt(io[3][1]), two53plus1, where);
  assert.deepEqual(Buffer.from(io[4][1].hex, 'hex'), nx11, where);
  assert.deepEqual(Buffer.from(io[5][1].hex, 'hex'), nx66, where);
}

test('telemetry tail --json: every ts and IO value exact, NX bytes as bytes', async () => {
  const { stdout } = await run(tgw, ['telemetry', 'tail', ...common, '--from', 'start',
                                     '--count', String(times.length), '--json', '--names']);
  const records = jsonLines(stdout);
  assert.equal(records.length, times.length);
  records.forEach((r, i) => {
    assertNoUnsafeNumber(r, `tail record ${i}`);
    assert.equal(BigInt(r.ts), times[i]);
    assert.equal(typeof r.time, 'string');
    checkIo(r.io, `tail record ${i}`);
    // Format 4: each integer with the bytes it took on the wire; bytes without.
    assert.deepEqual(r.io.map((e) => e[2]), [1, 1, 4, 8, undefined, undefined]);
    assert.deepEqual(r.io_named.dallas_temperature_1, { error: 'not_connected' });
    assert.deepEqual(r.io_named.digital_input_1, ['0', '1']);
    assert.deepEqual(Buffer.from(r.io_named.external_voltage.hex, 'hex'), nx66);
  });
  if (BigInt(Number.MAX_SAFE_INTEGER) > times[0])
    assert.equal(records[0].time, new Date(Number(times[0])).toISOString());
});

test('tgw decode: every timestamp and IO value exact', async () => {
  const { stdout } = await run(tgw, ['decode', avlFrame().toString('hex')]);
  const [frame] = jsonLines(stdout);
  assertNoUnsafeNumber(frame, 'decode');
  assert.equal(frame.records.length, times.length);
  frame.records.forEach((r, i) => {
    assert.equal(BigInt(r.timestamp_ms), times[i]);
    const io = r.io.map((e) => [e.id, 'hex' in e ? { hex: e.hex } : e.value]);
    checkIo(io, `decode record ${i}`);
  });
});

test('command watch --json and send --json: a binary reply byte for byte', async () => {
  watch = spawn(tgw, ['command', 'watch', '--json', ...common]);
  watch.stdout.on('data', (d) => { watchOut += d; });
  // The watcher prints the responses added after it started, which this side cannot
  // see: answer commands until one of them shows.
  let answer;
  let line;
  for (let attempt = 0; attempt < 20 && !line; attempt++) {
    const sent = run(tgw, ['command', 'send', '--json', ...common, '--imei', imei, '--text',
                           'getrs232', '--timeout', '10s']);
    const head = await device.socket.read(8);
    const rest = await device.socket.read(head.readUInt32BE(4) + 4);
    assert.equal(rest.subarray(7, rest.length - 5).toString(), 'getrs232');
    device.socket.send(commandReply(reply));
    const { stdout } = await sent;
    answer = JSON.parse(stdout);
    assert.equal(answer.status, 'responded');
    assert.equal(answer.response, null);
    assert.deepEqual(Buffer.from(answer.response_hex, 'hex'), reply);
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\uffff]/.test(stdout));
    line = await eventually(async () => {
      const found = jsonLines(watchOut).find((l) => l.command_id === answer.command_id);
      assert.ok(found, 'the watcher has not printed the response yet');
      return found;
    }, 2000).catch(() => undefined);
  }
  assert.ok(line, 'tgw command watch printed none of the responses');
  assert.equal(line.imei, imei);
  assert.deepEqual(Buffer.from(line.response_hex, 'hex'), reply);
  // The JSON lines are ASCII: no raw control byte reached the consumer's terminal.
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\uffff]/.test(watchOut));
});
