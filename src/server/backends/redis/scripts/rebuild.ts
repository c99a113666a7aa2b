/**
 * Writes chunks again after Redis lost the queue (reset.ts), fenced by the new epoch, each once
 * fleet-wide (`<p>rb:<flow>:<old entry>` marks, kept a day): those an instance holds (`hold`: it
 * keeps sending them, so the new entry is made pending under it, with the progress it knows) and
 * those it only accepted (any instance claims them); and marks chunks done meanwhile, so that their
 * acceptor does not write them again. One EVAL: a chunk written without its mark would be written
 * twice.
 *
 * KEYS: the sections' keys (`active`, `epoch`, then each chunk's stream), each once.
 * ARGV: the named sections of {@link REBUILD_SECTIONS} (sections.ts).
 * Reply: per chunk its new entry id, or '' when it was written already (by whoever marked it).
 */
import { defineScript } from './codec.js';
import { EPOCH_FENCE, STREAM_GROUP } from './modules.js';
import { encodeSections, records, sectionSchema, sectionsPrologue, SECTIONS_LUA, type SectionsOf } from './sections.js';

export const REBUILD_SECTIONS = sectionSchema('rebuild', {
  /** The queue's key prefix, with its hash tag (marks and progress hashes are under it). */
  prefix: 'str',
  /** `<p>active`: the set of the streams that may hold work. */
  active: 'key',
  /** `<p>epoch`: the queue's epoch marker. */
  epoch: 'key',
  /** The new epoch's id: another (or none) refuses the rebuild (`RESET`). */
  epochId: 'str',
  group: 'str',
  consumer: 'str',
  /** The lease (ms): entries nobody read that are delivered while one is made pending here are released at once. */
  leaseMs: 'int',
  /**
   * The chunks: their stream, mark (`rb:<flow>:<old entry>`, under the prefix), progress hash's head
   * (`p:<flow>:`, the new entry id completes it), whether this instance holds it, its contacts not
   * final (the backlog counts them), JSON body and progress fields.
   */
  chunks: records({ stream: 'key', mark: 'str', progressHead: 'str', hold: 'bool', open: 'int', body: 'str', fields: 'pairs' }),
  /** Marks of chunks done (nothing to write). */
  marks: 'strs',
});

export type RebuildArgs = SectionsOf<typeof REBUILD_SECTIONS>;

/** Per chunk, its new entry id; null when it was written already (by whoever marked it). */
export type RebuildResult = readonly (string | null)[];

export const REBUILD = defineScript<RebuildArgs, RebuildResult>({
  name: 'rebuild',
  uses: [SECTIONS_LUA, EPOCH_FENCE, STREAM_GROUP],
  body: `
${sectionsPrologue(REBUILD_SECTIONS)}
if epoch_lost(A.epoch, A.epochId) then return epoch_reset() end
local p = A.prefix
local out = {}
for _, c in ipairs(A.chunks) do
  if redis.call('SET', p .. c.mark, '1', 'NX', 'PX', 86400000) then
    stream_group(c.stream, A.group)
    redis.call('SADD', A.active, c.stream)
    local id = redis.call('XADD', c.stream, '*', 'b', c.body)
    redis.call('INCRBY', p .. 'backlog', c.open)
    if #c.fields > 0 then redis.call('HSET', p .. c.progressHead .. id, unpack(c.fields)) end
    if c.hold then
      -- Pending under this consumer: what XREADGROUP delivers with it (chunks nobody read yet) is
      -- released at once, for whoever takes over idle chunks next.
      local r = redis.call('XREADGROUP', 'GROUP', A.group, A.consumer, 'STREAMS', c.stream, '>')
      local others = { c.stream, A.group, A.consumer, '0' }
      for _, s in ipairs(r or {}) do
        for _, e in ipairs(s[2]) do
          if e[1] ~= id then others[#others + 1] = e[1] end
        end
      end
      if #others > 4 then
        others[#others + 1] = 'IDLE'
        others[#others + 1] = A.leaseMs
        others[#others + 1] = 'JUSTID'
        redis.call('XCLAIM', unpack(others))
      end
    end
    out[#out + 1] = id
  else
    out[#out + 1] = ''
  end
end
for _, mark in ipairs(A.marks) do redis.call('SET', p .. mark, '1', 'NX', 'PX', 86400000) end
return out
`,
  encode: (args) => encodeSections('rebuild', REBUILD_SECTIONS, args),
  decode: (reply, read) => read.texts(reply, 'entry ids').map((id) => (id === '' ? null : id)),
});
