// node summarize.mjs  -> median [min..max] over the repetitions in results/*.jsonl
import fs from 'node:fs';
const med = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[(s.length - 1) >> 1];
};
const fmt = (a) => (a.length ? `${med(a)} [${Math.min(...a)}..${Math.max(...a)}]` : '-');
const rows = fs.readFileSync('results/write.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
const by = {};
for (const r of rows) (by[r.config] ||= []).push(r);
const cols = [
  ['1a contacts/s', (r) => r.intake_per_request.contacts_per_s],
  ['1a commit med ms', (r) => r.intake_per_request.commit_ms.median],
  ['1a p99', (r) => r.intake_per_request.commit_ms.p99],
  ['1b contacts/s', (r) => r.intake_group10.contacts_per_s],
  ['1b commit med ms', (r) => r.intake_group10.commit_ms.median],
  ['1b p99', (r) => r.intake_group10.commit_ms.p99],
  ['2 contacts/s', (r) => r.handout.contacts_per_s],
  ['2 commit med', (r) => r.handout.commit_ms.median],
  ['2 p99', (r) => r.handout.commit_ms.p99],
  ['3 contacts/s', (r) => r.outcome.contacts_per_s],
  ['3 outcome med', (r) => r.outcome.outcome_commit_ms.median],
  ['3 outcome p99', (r) => r.outcome.outcome_commit_ms.p99],
  ['3 delete med', (r) => r.outcome.delete_commit_ms.median],
  ['3 delete p99', (r) => r.outcome.delete_commit_ms.p99],
  ['ELU 1a', (r) => r.intake_per_request.elu],
  ['ELU 3', (r) => r.outcome.elu],
  ['MB after 3', (r) => +(r.bytes_after_phase3 / 1e6).toFixed(1)],
];
for (const [name, f] of cols) {
  console.log(
    name.padEnd(18) +
      Object.keys(by)
        .map((c) => `${c}: ${fmt(by[c].map(f))}`)
        .join(' | '),
  );
}
for (const c of Object.keys(by)) if (by[c][0].settings) console.log(c, JSON.stringify(by[c][0].settings));
if (fs.existsSync('results/restart.jsonl')) console.log(fs.readFileSync('results/restart.jsonl', 'utf8'));
if (fs.existsSync('results/torn.jsonl')) console.log(fs.readFileSync('results/torn.jsonl', 'utf8'));
