/**
 * The bench's fake Graph API: a child process answering every `POST …/messages` with the Cloud
 * API's acceptance (`{ messaging_product, contacts, messages: [{ id: "wamid…" }] }`, a new wamid
 * each time, the recipient's `to` as its `wa_id`, as the platform answers for a number it knows in
 * that form). Raw HTTP/1.1 over `net`, parsing only the request's framing (headers end,
 * content-length) and finding `"to":"`: cheap enough that one core answers far more than one
 * instance of sendpool sends, so the figure is sendpool's, not the fake's. It reports its own CPU
 * time when asked. With FAKE_DELAY_MS it answers each request that long after it came, as a
 * platform far away does (bench/whatsapp-pacing.bench.ts).
 */
import net from 'node:net';

const DELAY_MS = Number(process.env.FAKE_DELAY_MS ?? 0);

const PREFIX = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\ncontent-length: ');
let seq = 0;
let answered = 0;

function answer(to: string): Buffer {
  const id = `wamid.HBgNNTUxMTk5MDAwMDAwMRUCABEYEj${(++seq).toString(36).padStart(8, '0')}`;
  const body = `{"messaging_product":"whatsapp","contacts":[{"input":"${to}","wa_id":"${to}"}],"messages":[{"id":"${id}"}]}`;
  return Buffer.concat([PREFIX, Buffer.from(`${Buffer.byteLength(body)}\r\n\r\n${body}`)]);
}

const CRLF2 = Buffer.from('\r\n\r\n');
const TO = Buffer.from('"to":"');

/** The `to` of a request body (`pending[from, end)`), or a placeholder. */
function recipient(pending: Buffer, from: number, end: number): string {
  const at = pending.indexOf(TO, from);
  if (at < 0 || at >= end) return '5511980000000';
  const close = pending.indexOf(0x22, at + TO.length);
  return close < 0 || close > end ? '5511980000000' : pending.toString('latin1', at + TO.length, close);
}

function contentLength(head: string): number {
  const i = head.toLowerCase().indexOf('content-length:');
  if (i < 0) return 0;
  return Number.parseInt(head.slice(i + 15, head.indexOf('\r\n', i) >>> 0 || undefined), 10) || 0;
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    const out: Buffer[] = [];
    let at = 0;
    for (;;) {
      const end = pending.indexOf(CRLF2, at);
      if (end < 0) break;
      const length = contentLength(pending.toString('latin1', at, end + 2));
      if (pending.length < end + 4 + length) break;
      out.push(answer(recipient(pending, end + 4, end + 4 + length)));
      at = end + 4 + length;
      answered++;
    }
    pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at);
    if (out.length > 0) {
      const answers = out.length === 1 ? out[0]! : Buffer.concat(out);
      if (DELAY_MS > 0) setTimeout(() => socket.writable && socket.write(answers), DELAY_MS);
      else socket.write(answers);
    }
  });
  socket.on('error', () => {});
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address() as net.AddressInfo;
  process.send?.({ url: `http://127.0.0.1:${address.port}` });
});

process.on('message', (m: { cpu?: boolean }) => {
  if (m.cpu) {
    const usage = process.cpuUsage();
    process.send?.({ cpuMs: (usage.user + usage.system) / 1000, answered });
  }
});
