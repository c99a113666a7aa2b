/**
 * The queue's step (queue.ts; its sections from a step: queue-step.ts): everything one write of an
 * instance records, whole or not at all — a 202's chunks, commit marks and idempotency answers;
 * hand-outs and finals of the chunks it holds with their contacts' notifications; chunks done
 * acknowledged and deleted with their progress (a stream left empty leaves the active set); webhook
 * events written and delivered; SMS accepted and answered; campaign statistics, shared memory and
 * dead letters. One EVAL: a step half written would promise what is not there, or send twice what
 * is.
 *
 * Progress is recorded only for chunks this consumer still holds: a chunk another instance took
 * over (this one stalled past the lease) is the new holder's to finish, so a contact gets one final.
 *
 * KEYS: the sections' keys (`active`, `outbox`, `sms`, `epoch`, then each chunk's stream and
 *       progress hash), each once.
 * ARGV: the named sections of {@link STEP_SECTIONS} (sections.ts).
 * Other keys, derived from `prefix` (all in its slot): `req:<request>` commit marks (`void`: voided
 * by another instance, shared-phones.ts), `step:<id>` steps applied (an hour), `backlog` the
 * contacts of chunks not done, `st:c<company>:{camp:<id>}:…` campaign statistics
 * (shared-statistics.ts), `mem:…` the shared memory, `dl:…` the dead letters, and idempotency
 * records under their own keys (idempotency.ts).
 * Reply: `{ 'applied', chunk entry ids, entry ids of the chunks no longer held }`;
 *        `{ 'repeated' }` when the step id was applied already (a reply lost, the step sent again);
 *        `{ 'voided', request ids }` when a request of the step was voided (nothing is written).
 */
import { defineScript } from './codec.js';
import { CAMPAIGN_REPORTS, DEAD_LETTERS, EPOCH_FENCE, MEMORY_WRITE, STREAM_GROUP } from './modules.js';
import { encodeSections, records, sectionSchema, sectionsPrologue, SECTIONS_LUA, type SectionsOf } from './sections.js';

export const STEP_SECTIONS = sectionSchema('step', {
  /** The queue's key prefix, with its hash tag. */
  prefix: 'str',
  /** `<p>active`: the set of the streams that may hold work. */
  active: 'key',
  /** `<p>outbox`: the webhook events' stream. */
  outbox: 'key',
  /** `<p>sms`: the SMS stream. */
  sms: 'key',
  /** `<p>epoch`: the queue's epoch marker (reset.ts). */
  epoch: 'key',
  /** The epoch id as the instance knows it ('' before its first look: no check); another refuses the step (`RESET`). */
  epochId: 'str',
  dispatchGroup: 'str',
  outboxGroup: 'str',
  smsGroup: 'str',
  consumer: 'str',
  /** Applied once: a step sent again with it after a lost reply answers `repeated`. */
  stepId: 'str',
  /** How long a request's commit mark is kept (ms). */
  commitTtlMs: 'int',
  /** How long an idempotency record is kept (ms). */
  idempotencyTtlMs: 'int',
  /**
   * Requests committed: the mark, and the first answer kept under their idempotency record's key
   * ('' none) unless another request holds it.
   */
  requests: records({ id: 'str', idempotencyKey: 'str', answer: 'str' }),
  /** Chunks written: their stream, JSON body, and contacts (the backlog counts them). */
  chunks: records({ stream: 'key', body: 'str', contacts: 'int' }),
  /**
   * Chunks held with something to record: progress fields (`h<i>`, `e<i>`, `f<i>`), their contacts'
   * notifications (written only while held), and `done` (acknowledged and deleted, its contacts
   * leave the backlog).
   */
  progress: records({ stream: 'key', entryId: 'str', progress: 'key', done: 'bool', contacts: 'int', fields: 'pairs', events: 'strs' }),
  /** Outbox entries delivered (or given up): acknowledged and deleted. */
  delivered: 'strs',
  /** SMS accepted (JSON), for any instance to send. */
  smsAccepted: 'strs',
  /** SMS entries the gateway answered: acknowledged and deleted. */
  smsAnswered: 'strs',
  /** How long a finished campaign keeps its contacts' states (ms). */
  retainContactsMs: 'int',
  /** The step's time (ms): a campaign a report names first is created at it. */
  reportedAt: 'int',
  /** Campaign reports: `contact`, `op`, `a3`, `a4` as `campaign_report`'s (src/redis/scripts/campaign.ts). */
  reports: records({ company: 'str', campaign: 'str', contact: 'str', op: 'str', a3: 'str', a4: 'str' }),
  /** Entries a generation of the shared memory holds. */
  memoryGeneration: 'int',
  /** Shared memory entries (value '' deletes). */
  memory: 'pairs',
  /** The most dead letters kept per company. */
  deadLetterKeep: 'int',
  /** The oldest dead letter kept (ms). */
  deadLetterOldest: 'int',
  /** Dead letters kept, written with the step that acknowledges their events. */
  deadLetters: records({ company: 'str', id: 'str', at: 'int', family: 'str', json: 'str' }),
  /** Webhook events (JSON), written last. */
  events: 'strs',
});

export type StepArgs = SectionsOf<typeof STEP_SECTIONS>;

/** A campaign statistics report the step joins into the shared counts (shared-statistics.ts). */
export type CampaignReport = StepArgs['reports'][number];

export type StepResult =
  | { readonly outcome: 'applied'; readonly ids: readonly string[]; readonly lost: readonly string[] }
  | { readonly outcome: 'repeated' }
  | { readonly outcome: 'voided'; readonly requests: readonly string[] };

export const STEP = defineScript<StepArgs, StepResult>({
  name: 'step',
  uses: [SECTIONS_LUA, EPOCH_FENCE, STREAM_GROUP, CAMPAIGN_REPORTS, DEAD_LETTERS, MEMORY_WRITE],
  body: `
${sectionsPrologue(STEP_SECTIONS)}
if epoch_lost(A.epoch, A.epochId) then return epoch_reset() end
local group = A.dispatchGroup
local root = A.prefix
-- The fence: a request another voided (it took over its phones, shared-phones.ts) is never
-- committed; the step is refused whole, for the instance to write it again without it.
local voided = {}
for _, r in ipairs(A.requests) do
  if redis.call('GET', root .. 'req:' .. r.id) == 'void' then voided[#voided + 1] = r.id end
end
if #voided > 0 then return { 'voided', voided } end
if not redis.call('SET', root .. 'step:' .. A.stepId, '1', 'NX', 'PX', 3600000) then return { 'repeated' } end
for _, r in ipairs(A.requests) do
  redis.call('SET', root .. 'req:' .. r.id, '1', 'PX', A.commitTtlMs)
  if r.idempotencyKey ~= '' then
    local owner = redis.call('HGET', r.idempotencyKey, 'req')
    if owner == false or owner == r.id then
      redis.call('HSET', r.idempotencyKey, 'req', r.id, 'ans', r.answer)
      redis.call('PEXPIRE', r.idempotencyKey, A.idempotencyTtlMs)
    end
  end
end
local backlog = root .. 'backlog'
local ids = {}
for _, c in ipairs(A.chunks) do
  stream_group(c.stream, group)
  redis.call('SADD', A.active, c.stream)
  ids[#ids + 1] = redis.call('XADD', c.stream, '*', 'b', c.body)
  redis.call('INCRBY', backlog, c.contacts)
end
local lost = {}
for _, p in ipairs(A.progress) do
  local held = false
  if redis.call('EXISTS', p.stream) == 1 then
    local pending = redis.call('XPENDING', p.stream, group, p.entryId, p.entryId, 1)
    held = pending[1] ~= nil and pending[1][2] == A.consumer
  end
  if not held then
    lost[#lost + 1] = p.entryId
  else
    if #p.events > 0 then stream_group(A.outbox, A.outboxGroup) end
    for _, e in ipairs(p.events) do redis.call('XADD', A.outbox, '*', 'e', e) end
    if p.done then
      redis.call('DECRBY', backlog, p.contacts)
      redis.call('XACK', p.stream, group, p.entryId)
      redis.call('XDEL', p.stream, p.entryId)
      redis.call('DEL', p.progress)
      if redis.call('XLEN', p.stream) == 0 and tonumber(redis.call('XPENDING', p.stream, group)[1]) == 0 then
        redis.call('DEL', p.stream)
        redis.call('SREM', A.active, p.stream)
      end
    elseif #p.fields > 0 then
      redis.call('HSET', p.progress, unpack(p.fields))
    end
  end
end
for _, id in ipairs(A.delivered) do
  redis.call('XACK', A.outbox, A.outboxGroup, id)
  redis.call('XDEL', A.outbox, id)
end
if #A.smsAccepted > 0 then stream_group(A.sms, A.smsGroup) end
for _, s in ipairs(A.smsAccepted) do redis.call('XADD', A.sms, '*', 'e', s) end
for _, id in ipairs(A.smsAnswered) do
  redis.call('XACK', A.sms, A.smsGroup, id)
  redis.call('XDEL', A.sms, id)
end
local accs = {}
for _, r in ipairs(A.reports) do
  local company = root .. 'st:c' .. r.company .. ':'
  local base = company .. '{camp:' .. r.campaign .. '}:'
  local acc = accs[base]
  if acc == nil then
    acc = campaign_acc()
    accs[base] = acc
    if redis.call('HSETNX', base .. 'meta', 'createdAt', A.reportedAt) == 1 then
      redis.call('HSETNX', base .. 'meta', 'name', 'campaign ' .. r.campaign)
      redis.call('SADD', company .. 'campaigns', r.campaign)
    end
  end
  campaign_report(acc, base .. 'contacts', base .. 'counts', base .. 'dirty', base .. 'live', base .. 'ranges',
    base .. 'window', r.contact, r.op, r.a3, r.a4, '1')
end
for _, acc in pairs(accs) do campaign_finish(acc, A.retainContactsMs) end
if #A.memory > 0 then memory_write(root .. 'mem:', tonumber(A.memoryGeneration), AT.memory, #A.memory / 2) end
for _, d in ipairs(A.deadLetters) do
  dl_add(root .. 'dl:', d.company, d.id, d.at, d.family, d.json, tonumber(A.deadLetterKeep), A.deadLetterOldest)
end
if #A.events > 0 then stream_group(A.outbox, A.outboxGroup) end
for _, e in ipairs(A.events) do redis.call('XADD', A.outbox, '*', 'e', e) end
return { 'applied', ids, lost }
`,
  encode: (args) => encodeSections('step', STEP_SECTIONS, args),
  decode: (reply, read) => {
    const [outcome, ...rest] = read.list(reply, 'reply');
    switch (read.text(outcome, 'outcome')) {
      case 'applied':
        return { outcome: 'applied', ids: read.texts(rest[0], 'chunk entry ids'), lost: read.texts(rest[1], 'chunks lost') };
      case 'repeated':
        return { outcome: 'repeated' };
      case 'voided':
        return { outcome: 'voided', requests: read.texts(rest[0], 'requests voided') };
      default:
        return read.unexpected(outcome, 'outcome');
    }
  },
});
