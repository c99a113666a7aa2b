/**
 * A scripted responder for `RedisStore` without Redis: it answers the store's three scripts (lease,
 * give-back, epoch) by running JavaScript transcriptions of their Lua (src/redis/scripts/) on an
 * in-memory keyspace, at the time each call carries (the store's `timeSource: 'clock'`). Anything
 * else is refused, so a store that started using another command fails here, not silently.
 *
 * Why a transcription and not a fake that grants freely: the store contract suite checks windows,
 * and a responder that did not charge them would prove nothing about the ledger and the driver.
 * Why it can be trusted: test/redis/scripted-redis.test.ts sends the same random calls to a real
 * Redis and to this responder and compares every answer and every state field.
 *
 * Lua's numbers are doubles, as JavaScript's; Redis stores a Lua number with 14 significant digits
 * (`%.14g`), which every value here (whole milliseconds, counts) fits, so `String(n)` is the same.
 */
import { EPOCH_SCRIPT } from '../../src/redis/scripts/epoch.js';
import { GIVE_BACK_SCRIPT } from '../../src/redis/scripts/give-back.js';
import { LEASE_SCRIPT } from '../../src/redis/scripts/lease.js';
import { script } from '../../src/redis/script-runner.js';

const HOUR = 3_600_000;
const SECOND = 1000;
const DAY = 86_400_000;

type Hash = Map<string, string>;

/** What the transcriptions read and write: hashes and one sorted set, with expiry at script time. */
class Keyspace {
  readonly hashes = new Map<string, Hash>();
  readonly zsets = new Map<string, Map<string, number>>();
  readonly #expireAt = new Map<string, number>();

  /** Drops the keys whose time has passed at `now` (Redis expires lazily; the effect is the same). */
  expire(now: number): void {
    for (const [key, at] of this.#expireAt) {
      if (at <= now) {
        this.hashes.delete(key);
        this.zsets.delete(key);
        this.#expireAt.delete(key);
      }
    }
  }

  hget(key: string, field: string): string | false {
    return this.hashes.get(key)?.get(field) ?? false;
  }

  hmget(key: string, ...fields: string[]): (string | false)[] {
    return fields.map((f) => this.hget(key, f));
  }

  hset(key: string, ...pairs: (string | number)[]): void {
    let h = this.hashes.get(key);
    if (!h) this.hashes.set(key, (h = new Map()));
    for (let i = 0; i < pairs.length; i += 2) h.set(String(pairs[i]), String(pairs[i + 1]));
  }

  hdel(key: string, ...fields: string[]): void {
    const h = this.hashes.get(key);
    if (!h) return;
    for (const f of fields) h.delete(f);
    if (h.size === 0) this.del(key);
  }

  hincrby(key: string, field: string, by: number): void {
    this.hset(key, field, (Number(this.hget(key, field)) || 0) + by);
  }

  pexpire(key: string, ms: number, now: number): void {
    if (this.hashes.has(key) || this.zsets.has(key)) this.#expireAt.set(key, now + ms);
  }

  del(key: string): void {
    this.hashes.delete(key);
    this.zsets.delete(key);
    this.#expireAt.delete(key);
  }
}

/** `tonumber(x) or d` of Lua, for a field read with HGET/HMGET (false when missing). */
function num(x: string | false | undefined, d: number): number;
function num(x: string | false | undefined): number | undefined;
function num(x: string | false | undefined, d?: number): number | undefined {
  if (x === false || x === undefined || x.trim() === '') return d;
  const n = Number(x);
  return Number.isNaN(n) ? d : n;
}

const full = (tat: number, rem: number, t: number) => tat < t || (tat === t && rem === 0);
function avail(tat: number, rem: number, cap: number, period: number, t: number): number {
  if (full(tat, rem, t)) return cap;
  const debt = Math.ceil(((tat - t) * cap + rem) / period);
  return debt >= cap ? 0 : cap - debt;
}
function take(tat: number, rem: number, cap: number, period: number, t: number, n: number): [number, number] {
  if (full(tat, rem, t)) [tat, rem] = [t, 0];
  const numer = rem + n * period;
  const whole = Math.floor(numer / cap);
  return [tat + whole, numer - whole * cap];
}
function availAt(tat: number, rem: number, cap: number, period: number, t: number, n: number): number {
  if (n > cap) return -1;
  const at = tat + Math.ceil((rem - (cap - n) * period) / cap);
  return at > t ? at : t;
}
function rescale(tat: number, rem: number, old: number, cap: number, t: number): [number, number] {
  if (full(tat, rem, t)) return [0, 0];
  const x = (tat - t) * old + rem;
  const whole = Math.floor(x / cap);
  return [t + whole, x - whole * cap];
}
function level(counts: number[], total: number): number {
  counts.sort((a, b) => a - b);
  let l = counts[0]!;
  let rest = total;
  for (let k = 1; k <= counts.length; k++) {
    const next = counts[k];
    if (next === undefined || (next - l) * k > rest) return l + rest / k;
    rest -= (next - l) * k;
    l = next;
  }
  return l;
}

/** The time of a call: the override (the store's clock time); the responder has no clock of its own. */
function callTime(arg: string | undefined): number {
  if (arg === undefined || arg === '') throw new Error("scripted Redis: the store must pass its clock's time (timeSource: 'clock')");
  return Number(arg);
}

/** LEASE_SCRIPT, line for line (src/redis/scripts/lease.ts has the contract). */
function lease(db: Keyspace, keys: string[], argv: string[]): number[] {
  const now = callTime(argv[0]);
  db.expire(now);
  const epoch = argv[1]!;
  const bucketMs = Number(argv[2]);
  const keep = Number(argv[3]);
  const floorAt = Number(argv[4]);
  const me = argv[5]!;
  const grace = Number(argv[6]);
  const minRetry = Number(argv[7]);
  const fleet = Number(argv[8]);
  const fairOn = argv[9] === '1';
  const ring = DAY / bucketMs + 1;
  const ahead = Math.ceil(keep / bucketMs) + 2;

  const one = (i: number): number[] => {
    const sk = keys[2 * i]!;
    const lk = keys[2 * i + 1]!;
    const a = 10 + 10 * i;
    const want = Number(argv[a]);
    const hCap = Number(argv[a + 1]);
    const sCap = Number(argv[a + 2]);
    const dLimit = Number(argv[a + 3]);
    const leaseId = argv[a + 4]!;
    const ttl = Number(argv[a + 5]);
    const callerSeen = Number(argv[a + 6]);
    const confirm = num(argv[a + 7]);
    const held = Number(argv[a + 8]);
    const heldUntil = Number(argv[a + 9]);
    const f = db.hmget(sk, 'ht', 'hr', 'hc', 'st', 'sr', 'sc', 'dh', 'ds', 't', 'ep', 'fl', 'fair', 'fr', 'hd');
    const exists = f[8] !== false;
    if (confirm === undefined) {
      if (!exists) return [0, 0, now, 0, 1, 0];
      if (epoch !== '' && f[9] !== false && f[9] !== epoch) return [0, 0, now, 0, 2, 0];
      if (num(f[8], 0) < callerSeen) return [0, 0, now, 0, 3, 0];
    }
    let ht = num(f[0], 0);
    let hr = num(f[1], 0);
    const hc = num(f[2], hCap);
    let st = num(f[3], 0);
    let sr = num(f[4], 0);
    const sc = num(f[5], sCap);
    let dh = num(f[6], -1);
    let ds = num(f[7], 0);
    const seen = num(f[8], 0);
    let fl = num(f[10], 0);
    let t = now;
    if (seen > t) t = seen;
    if (hc !== hCap) [ht, hr] = rescale(ht, hr, hc, hCap, t);
    if (sc !== sCap) {
      if (sc > 0 && sCap > 0) [st, sr] = rescale(st, sr, sc, sCap, t);
      else [st, sr] = [0, 0];
    }
    const cur = Math.floor(t / bucketMs);
    if (cur > dh) {
      if (dh >= 0) {
        let hi = cur - ring;
        const top = dh + ahead;
        if (hi > top) hi = top;
        for (let k = dh - ring + 1; k <= hi; k++) {
          const c = num(db.hget(sk, `d${k}`));
          if (c !== undefined) {
            ds -= c;
            db.hdel(sk, `d${k}`);
          }
        }
      }
      dh = cur;
    }
    let lossAt = floorAt;
    if (confirm !== undefined && confirm > lossAt) lossAt = confirm;
    if (lossAt > fl) {
      const at = lossAt + ttl;
      const th = at + HOUR + Math.ceil((ds * HOUR) / hCap);
      if (th > ht) [ht, hr] = [th, 0];
      if (sCap > 0) {
        const ts = at + SECOND + Math.ceil((ds * SECOND) / sCap);
        if (ts > st) [st, sr] = [ts, 0];
      }
      let rate = (hCap * bucketMs) / HOUR;
      let burst = hCap;
      if (sCap > 0) {
        if ((sCap * bucketMs) / SECOND < rate) rate = (sCap * bucketMs) / SECOND;
        if (sCap < burst) burst = sCap;
      }
      rate = Math.ceil(rate);
      let rest = dLimit;
      let k = Math.floor(at / bucketMs);
      let add = burst + rate;
      while (rest > 0 && k > cur - ring) {
        if (add > rest) add = rest;
        db.hincrby(sk, `d${k}`, add);
        ds += add;
        rest -= add;
        k--;
        add = rate;
      }
      fl = lossAt;
    }
    let granted: number;
    let grantedAt: number;
    let fair: Record<string, [number, number, number]> | undefined;
    let round = num(f[12], 0);
    let count = 0;
    let limited = false;
    const rec = db.hmget(lk, 'g', 'a');
    if (rec[0] !== false) {
      granted = Number(rec[0]);
      grantedAt = Number(rec[1]);
    } else {
      let g = avail(ht, hr, hCap, HOUR, t);
      if (sCap > 0) g = Math.min(g, avail(st, sr, sCap, SECOND, t));
      const d = dLimit - ds;
      if (d < g) g = d;
      if (g < 0) g = 0;
      const room = g;
      if (want < g) g = want;
      if (fairOn && me !== '' && want > 0) {
        const raw = f[11];
        fair = typeof raw === 'string' ? (JSON.parse(raw) as Record<string, [number, number, number]>) : {};
        const others: number[] = [];
        let mine: [number, number, number] | undefined;
        let known = 1;
        for (const [id, r] of Object.entries(fair)) {
          if (r[1] + grace < t) delete fair[id];
          else if (id === me) mine = r;
          else {
            known++;
            if (r[2] === 1) others.push(r[0]);
          }
        }
        if (mine === undefined && known === 1) round = t;
        if (t < round + grace) for (let k = known + 1; k <= fleet; k++) others.push(0);
        if (mine) count = mine[0];
        if (others.length > 0) {
          const low = Math.min(...others);
          let burst = hCap;
          if (sCap > 0 && sCap < burst) burst = sCap;
          if (dLimit < burst) burst = dLimit;
          const start = low - Math.ceil(burst / fleet);
          if ((mine === undefined || mine[2] !== 1) && count < start) count = start;
          let share = Math.ceil(level([count, ...others], room) - count - 1e-9);
          if (share < 0) share = 0;
          if (share < g) {
            g = share;
            limited = true;
          }
        }
      }
      granted = g;
      grantedAt = t;
      if (g > 0) {
        [ht, hr] = take(ht, hr, hCap, HOUR, t + ttl, g);
        if (sCap > 0) [st, sr] = take(st, sr, sCap, SECOND, t + ttl, g);
        const b = Math.floor((t + ttl) / bucketMs);
        db.hincrby(sk, `d${b}`, g);
        ds += g;
        db.hset(lk, 'g', g, 'a', t, 'b', b, 'r', 0);
        db.pexpire(lk, keep, now);
        db.hset(sk, 'last', leaseId);
      }
    }
    db.hset(sk, 'ht', ht, 'hr', hr, 'hc', hCap, 'st', st, 'sr', sr, 'sc', sCap, 'dh', dh, 'ds', ds, 't', t, 'fl', fl);
    if (epoch !== '') db.hset(sk, 'ep', epoch);
    db.pexpire(sk, DAY + 2 * bucketMs + keep, now);
    let left = avail(ht, hr, hCap, HOUR, t);
    let retryAt = availAt(ht, hr, hCap, HOUR, t, 1);
    if (sCap > 0) {
      left = Math.min(left, avail(st, sr, sCap, SECOND, t));
      const sa = availAt(st, sr, sCap, SECOND, t, 1);
      if (sa > retryAt) retryAt = sa;
    }
    const d = dLimit - ds;
    if (d < left) left = d;
    if (left < 0) left = 0;
    if (d < 1) {
      if (dLimit < 1) retryAt = -1;
      else {
        let excess = ds + 1 - dLimit;
        let at = -1;
        for (let k = dh - ring + 1; k <= dh + ahead; k++) {
          const c = num(db.hget(sk, `d${k}`));
          if (c !== undefined) {
            excess -= c;
            if (excess <= 0) {
              at = (k + ring) * bucketMs;
              break;
            }
          }
        }
        if (at > retryAt) retryAt = at;
      }
    }
    if (fair !== undefined) {
      const short = granted < want;
      let due = t + minRetry;
      if (short && !limited && retryAt > due) due = retryAt;
      if (retryAt < 0) delete fair[me];
      else fair[me] = [count + granted, due, short ? 1 : 0];
      if (Object.keys(fair).length === 0) db.hdel(sk, 'fair', 'fr');
      else db.hset(sk, 'fair', JSON.stringify(fair), 'fr', round);
    }
    let others = 0;
    if (me !== '') {
      const raw = f[13];
      const hd = typeof raw === 'string' ? (JSON.parse(raw) as Record<string, [number, number]>) : {};
      let changed = false;
      for (const [id, r] of Object.entries(hd)) {
        if (r[1] <= t) {
          delete hd[id];
          changed = true;
        } else if (id !== me) others += r[0];
      }
      const mine = held + granted;
      let upto = heldUntil;
      if (granted > 0 && grantedAt + ttl > upto) upto = grantedAt + ttl;
      const r = hd[me];
      if (mine > 0 && upto > t) {
        if (r === undefined || r[0] !== mine || r[1] !== upto) {
          hd[me] = [mine, upto];
          changed = true;
        }
      } else if (r !== undefined) {
        delete hd[me];
        changed = true;
      }
      if (changed) {
        if (Object.keys(hd).length === 0) db.hdel(sk, 'hd');
        else db.hset(sk, 'hd', JSON.stringify(hd));
      }
    }
    return [granted, grantedAt, retryAt, left, 0, others];
  };

  const out = [now];
  for (let i = 0; i < keys.length / 2; i++) out.push(...one(i));
  return out;
}

/** GIVE_BACK_SCRIPT, line for line (src/redis/scripts/give-back.ts). */
function giveBack(db: Keyspace, keys: string[], argv: string[]): number {
  const now = callTime(argv[0]);
  db.expire(now);
  const ttl = Number(argv[1]);
  let target = Number(argv[2]);
  const leaseId = argv[3]!;
  const [sk, lk] = [keys[0]!, keys[1]!];
  if (argv[5] !== undefined && argv[5] !== '') {
    const raw = db.hget(sk, 'hd');
    if (raw !== false) {
      const hd = JSON.parse(raw) as Record<string, unknown>;
      if (hd[argv[5]] !== undefined) {
        delete hd[argv[5]];
        if (Object.keys(hd).length === 0) db.hdel(sk, 'hd');
        else db.hset(sk, 'hd', JSON.stringify(hd));
      }
    }
  }
  const rec = db.hmget(lk, 'g', 'a', 'b', 'r');
  if (rec[0] === false) return 0;
  const g = Number(rec[0]);
  const a = Number(rec[1]);
  const b = rec[2] as string;
  const r = Number(rec[3]);
  const f = db.hmget(sk, 'ht', 'hr', 'hc', 'st', 'sr', 'sc', 'ds', 't', 'last', 'ep');
  if (f[7] === false) return 0;
  if (argv[4] !== undefined && argv[4] !== '' && f[9] !== false && f[9] !== argv[4]) return 0;
  let t = now;
  const seen = num(f[7], 0);
  if (seen > t) t = seen;
  if (t >= a + ttl) return 0;
  if (target > g) target = g;
  const delta = target - r;
  if (delta <= 0) return 0;
  const c = num(db.hget(sk, `d${b}`));
  if (c !== undefined) {
    const dec = Math.min(delta, c);
    db.hincrby(sk, `d${b}`, -dec);
    db.hset(sk, 'ds', num(f[6], 0) - dec);
  }
  if (f[8] === leaseId) {
    const back = (tat: number, rem: number, cap: number, period: number, n: number): [number, number] => {
      const numer = rem - n * period;
      const whole = Math.floor(numer / cap);
      return [tat + whole, numer - whole * cap];
    };
    const hc = num(f[2]);
    if (hc !== undefined && hc > 0) {
      const [ht, hr] = back(Number(f[0]), Number(f[1]), hc, HOUR, delta);
      db.hset(sk, 'ht', ht, 'hr', hr);
    }
    const sc = num(f[5]);
    if (sc !== undefined && sc > 0) {
      const [st, sr] = back(Number(f[3]), Number(f[4]), sc, SECOND, delta);
      db.hset(sk, 'st', st, 'sr', sr);
    }
  }
  db.hset(lk, 'r', target);
  return delta;
}

/** EPOCH_SCRIPT, line for line (src/redis/scripts/epoch.ts). */
function epochCall(db: Keyspace, keys: string[], argv: string[]): (number | string)[] {
  const now = callTime(argv[0]);
  db.expire(now);
  const known = argv[1]!;
  const life = Number(argv[3]);
  const q = Number(argv[4]);
  const [marker, register] = [keys[0]!, keys[1]!];
  const m = db.hmget(marker, 'id', 'since', 'lost');
  let id = m[0] ?? false;
  let since = num(m[1]);
  let lost = num(m[2]);
  if (id === false) {
    id = argv[2]!;
    since = now;
    db.hset(marker, 'id', id, 'since', since);
    if (known !== '') {
      lost = now;
      db.hset(marker, 'lost', lost);
    }
  } else if (known !== '' && known !== id && lost === undefined) {
    lost = since;
    db.hset(marker, 'lost', lost!);
  }
  const out: (number | string)[] = [now, id, since!, lost ?? -1];
  let z = db.zsets.get(register);
  for (let k = 1; k <= q; k++) {
    const s = z?.get(argv[4 + k]!);
    out.push(s !== undefined && now - s < life ? 1 : 0);
  }
  for (let k = 5 + q; k < argv.length - 1; k += 2) {
    const seen = Number(argv[k + 1]);
    if (seen >= since!) {
      if (!z) db.zsets.set(register, (z = new Map()));
      const old = z.get(argv[k]!);
      if (old === undefined || seen > old) z.set(argv[k]!, seen);
    }
  }
  if (z) for (const [phone, s] of z) if (s <= now - life) z.delete(phone);
  return out;
}

const SCRIPTS = new Map<string, (db: Keyspace, keys: string[], argv: string[]) => unknown>([
  [script(LEASE_SCRIPT).sha, lease],
  [script(GIVE_BACK_SCRIPT).sha, giveBack],
  [script(EPOCH_SCRIPT).sha, epochCall],
]);

/**
 * A client `RedisStore` accepts (`evalsha`, `eval`, `status`) answering from the transcriptions.
 * `keyspace` is exposed for the agreement test, which compares it field by field with Redis.
 */
export class ScriptedRedis {
  readonly status = 'ready';
  readonly keyspace = new Keyspace();
  /** Lease, give-back and epoch calls answered. */
  calls = 0;

  async evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
    const run = SCRIPTS.get(sha);
    if (!run) throw new Error(`NOSCRIPT scripted Redis knows only the lease, give-back and epoch scripts (${sha})`);
    this.calls++;
    const all = args.map(String);
    return run(this.keyspace, all.slice(0, numKeys), all.slice(numKeys));
  }

  async eval(source: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
    return this.evalsha(script(source).sha, numKeys, ...args);
  }
}
