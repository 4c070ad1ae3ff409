// The application API with the clients a back office would use: Node's fetch, and an
// EventSource (the eventsource package, the WHATWG one) that reconnects by itself
// with Last-Event-ID, against a real redis-server, `tgw serve` and `tgw api`, and a
// device written here that answers commands. Every JSON answer is held to
// docs/api/openapi.json. Usage: node api_clients_test.mjs /path/to/tgw
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateDocument, answerValidator } from './openapi_validator.mjs';
import { u, frame } from '../support/teltonika_frame.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { EventSource } = createRequire(path.join(here, 'npm', 'package.json'))('eventsource');
const tgw = process.argv[2] ?? process.env.TGW_BINARY;
if (!tgw) throw new Error('usage: node api_clients_test.mjs /path/to/tgw');

const imei = '356307042441013';
const reply = Buffer.from('Ver:03.28.07 GPS:1\r\n\u00e9', 'utf8');
const dir = mkdtempSync(path.join(os.tmpdir(), 'tgw-api-clients-'));
const children = [];
let check;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, done, seconds = 20) {
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    try {
      if (await done()) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${what}: not within ${seconds} s`);
}
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
function start(argv, name) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', () => {});
  child.name = name;
  children.push(child);
  return child;
}

// Codec 8, one record at `ts`, no IO element.
const avl = (ts) => frame(Buffer.concat([u(8, 1), u(1, 1), u(ts, 8), u(1, 1), u(0, 15), u(0, 6), u(1, 1)]));

// A tracker: handshake, records on demand, and a Codec 12 answer to every command.
class Tracker {
  constructor(port) {
    this.commands = [];
    this.socket = net.connect(port, '127.0.0.1');
    this.buffer = Buffer.alloc(0);
    this.acks = 0;
    this.socket.on('data', (d) => this.feed(d));
  }
  async hello() {
    this.socket.write(Buffer.concat([u(imei.length, 2), Buffer.from(imei)]));
    await until('handshake', () => this.accepted);
  }
  feed(d) {
    this.buffer = Buffer.concat([this.buffer, d]);
    for (;;) {
      if (!this.accepted && this.buffer.length >= 1) {
        this.accepted = this.buffer[0] === 1;
        this.buffer = this.buffer.subarray(1);
        continue;
      }
      if (this.buffer.length >= 4 && this.buffer.readUInt32BE(0) !== 0) {  // an ACK
        this.acks += this.buffer.readUInt32BE(0);
        this.buffer = this.buffer.subarray(4);
        continue;
      }
      if (this.buffer.length < 8) return;
      const size = this.buffer.readUInt32BE(4);
      if (this.buffer.length < 12 + size) return;
      const data = this.buffer.subarray(8, 8 + size);
      this.buffer = this.buffer.subarray(12 + size);
      const text = data.subarray(7, 7 + data.readUInt32BE(3)).toString('latin1');
      this.commands.push(text);
      const response = Buffer.concat([u(0x0c, 1), u(1, 1), u(6, 1), u(reply.length, 4), reply, u(1, 1)]);
      this.socket.write(frame(response));
    }
  }
  async records(first, n) {
    const want = this.acks + n;
    for (let i = 0; i < n; i++) {
      this.socket.write(avl(first + i * 1000));
      await until('ACK', () => this.acks >= want - (n - i - 1));
    }
  }
}

let redisPort, gatewayPort, apiPort, token, tracker;
let api;
const tokens = path.join(dir, 'tokens');
const startApi = () =>
  (api = start([tgw, 'api', '--listen', `127.0.0.1:${apiPort}`, '--redis', `redis://127.0.0.1:${redisPort}/0`,
    '--tokens', tokens], 'tgw api'));

async function call(method, target, route, body, headers = {}) {
  const r = await fetch(`http://127.0.0.1:${apiPort}${target}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  check({ method, path: route, status: r.status, content_type: r.headers.get('content-type'), body: text });
  return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : null };
}

before(async () => {
  check = answerValidator(await validateDocument());
  [redisPort, gatewayPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  start(['redis-server', '--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], 'redis');
  await until('redis', () => new Promise((r) => net.connect(redisPort, '127.0.0.1').on('connect', function () { this.destroy(); r(true); }).on('error', () => r(false))));
  start([tgw, 'serve', '--port', String(gatewayPort), '--bind', '127.0.0.1', '--redis', `redis://127.0.0.1:${redisPort}/0`,
    '--metrics-addr', '', '--instance-id', 'gw-node'], 'tgw serve');
  token = execFileSync(tgw, ['api', 'token', 'add', 'node-backoffice', '--scopes', 'read,command,events', '--tokens', tokens],
    { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  startApi();
  await until('tgw api', async () => (await fetch(`http://127.0.0.1:${apiPort}/readyz`)).ok);
  await until('the gateway', () => new Promise((r) => net.connect(gatewayPort, '127.0.0.1').on('connect', function () { this.destroy(); r(true); }).on('error', () => r(false))));
  tracker = new Tracker(gatewayPort);
  await tracker.hello();
});

after(() => {
  tracker?.socket.destroy();
  for (const c of children.reverse()) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

test('fetch: a command with ?wait returns the reply byte-exact', async () => {
  const r = await call('POST', `/v1/devices/${imei}/commands?wait=30`, '/v1/devices/{imei}/commands', { text: 'getver' });
  assert.equal(r.status, 200);
  assert.equal(r.json.status, 'responded');
  assert.equal(r.json.response, reply.toString('utf8'));
  assert.equal(r.json.response_hex, reply.toString('hex').toUpperCase());
  assert.equal(r.json.publisher, 'node-backoffice');
  assert.equal(r.headers.get('location'), `/v1/commands/${r.json.command_id}`);
  const again = await call('GET', r.headers.get('location'), '/v1/commands/{id}');
  assert.equal(again.json.response_hex, r.json.response_hex);
});

test('fetch: one Idempotency-Key, one command however often it is sent', async () => {
  const before = tracker.commands.length;
  const key = { 'Idempotency-Key': 'node-7f1c' };
  const answers = await Promise.all([1, 2, 3].map(() =>
    call('POST', `/v1/devices/${imei}/commands?wait=30`, '/v1/devices/{imei}/commands', { text: 'getinfo' }, key)));
  assert.equal(new Set(answers.map((a) => a.json.command_id)).size, 1);
  assert.equal(tracker.commands.length - before, 1);
});

test('fetch: devices, the device and its records, with 64-bit values as strings', async () => {
  await tracker.records(1700000000000, 2);
  const list = await call('GET', '/v1/devices', '/v1/devices');
  assert.deepEqual(list.json.devices.map((d) => d.imei), [imei]);
  assert.equal(typeof list.json.devices[0].records_total, 'string');
  const one = await call('GET', `/v1/devices/${imei}`, '/v1/devices/{imei}');
  assert.equal(one.json.online, true);
  const records = await call('GET', `/v1/devices/${imei}/records?from=2020-01-01T00:00:00Z`, '/v1/devices/{imei}/records');
  assert.ok(records.json.records.some((r) => r.ts === '1700000000000' && r.time === '2023-11-14T22:13:20.000Z'));
});

test('EventSource: reconnects with Last-Event-ID across an API restart and misses nothing', async () => {
  const seen = [];
  const resumedWith = [];
  const es = new EventSource(`http://127.0.0.1:${apiPort}/v1/events?types=record&imei=${imei}`, {
    fetch: (input, init) => {
      const h = new Headers(init?.headers);
      if (h.get('last-event-id')) resumedWith.push(h.get('last-event-id'));
      h.set('Authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers: h });
    },
  });
  es.addEventListener('record', (e) => seen.push(JSON.parse(e.data).ts));
  const t0 = 1710000000000;
  // Closed however the test ends: an open EventSource keeps the process alive.
  try {
    await until('the stream opens', () => es.readyState === EventSource.OPEN);
    await tracker.records(t0, 3);
    await until('the first records', () => seen.length >= 3);
    // The API goes away while records keep coming; the client reconnects by itself.
    api.kill('SIGKILL');
    await tracker.records(t0 + 10000, 3);
    startApi();
    // Alive, not necessarily ready: a client that comes before the streams are read
    // waits for them (an EventSource never retries a refusal).
    await until('tgw api again', async () => (await fetch(`http://127.0.0.1:${apiPort}/healthz`)).ok);
    await until('the resumed records', () => seen.length >= 6, 30);
    await tracker.records(t0 + 20000, 2);
    await until('the live records', () => seen.length >= 8, 20);
  } finally {
    es.close();
  }
  const expected = [0, 1, 2, 10, 11, 12, 20, 21].map((s) => String(t0 + s * 1000));
  assert.deepEqual(seen, expected);
  assert.ok(resumedWith.length >= 1, 'the client reconnected with Last-Event-ID');
});
