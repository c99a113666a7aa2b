// sendpool operator dashboard: one module, no dependencies, no build step.
//
// It polls the server's /dashboard/api/ endpoints with the key the user typed (kept in this tab's
// sessionStorage only, sent as the API expects: x-api-key-id), renders small pages of each list,
// keeps the output samples it was given for the charts, pauses or resumes numbers and templates
// through the operator endpoints and replays dead letters after a confirmation. Everything it draws is made with
// the DOM (no inline code or styles: the page's Content-Security-Policy forbids them).

const KEY_STORAGE = 'sendpool.dashboard.key';
const POLL_MS = 1500;
const HOUR_MS = 3_600_000;
const api = (path) => new URL(`api/${path}`, document.baseURI);
const operator = (path) => new URL(`../operator/${path}`, document.baseURI);

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat('en');
const fmt1 = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

/** Paging and filters of each list. */
const lists = {
  pools: { offset: 0, limit: 50, total: 0 },
  numbers: { offset: 0, limit: 50, total: 0, q: '', status: '' },
  templates: { offset: 0, limit: 50, total: 0 },
  campaigns: { offset: 0, limit: 20, total: 0 },
  webhooks: { offset: 0, limit: 20, total: 0 },
};

/** The newest dead letters shown (the API pages them by cursor; the page shows the first page). */
const DEAD_LETTERS_SHOWN = 50;

/** Output samples the page has been given: per pool, and the total; `since` asks only for newer ones. */
const samples = { pools: new Map(), total: { t: [], output: [] }, since: 0 };

let key = sessionStorage.getItem(KEY_STORAGE) ?? '';
let timer;
/** Number of the latest poll: an older one's answer is dropped (a page, a filter or the key changed meanwhile). */
let current = 0;

// ------------------------------------------------------------------------------ DOM helpers

/** An element with attributes (`class`, `data-*`, …) and children (strings or nodes). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'onclick') el.addEventListener('click', value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) el.append(child instanceof Node ? child : String(child));
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  return el;
}

const number = (n) => (n === null || n === undefined ? '–' : fmt.format(n));
const time = (ms) => new Date(ms).toLocaleTimeString();
const dateTime = (ms) => new Date(ms).toLocaleString();

/** "in 3 min" / "4 min ago" from the server's clock. */
function relative(ms, now) {
  const d = ms - now;
  const a = Math.abs(d);
  const text =
    a < 60_000 ? `${Math.max(1, Math.round(a / 1000))} s` : a < HOUR_MS ? `${Math.round(a / 60_000)} min` : a < 48 * HOUR_MS ? `${fmt1.format(a / HOUR_MS)} h` : `${fmt1.format(a / 86_400_000)} d`;
  return d >= 0 ? `in ${text}` : `${text} ago`;
}

function showError(text) {
  const el = $('error');
  el.textContent = text ?? '';
  el.hidden = !text;
}

function setLive(text, ok) {
  const el = $('live');
  el.textContent = text;
  el.className = ok === undefined ? 'live' : ok ? 'live ok' : 'live stale';
}

// ------------------------------------------------------------------------------ requests

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function request(url, init = {}) {
  const headers = { 'x-api-key-id': key, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) };
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), cache: 'no-store', credentials: 'omit' });
  const text = await res.text();
  let body;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function listUrl(name, extra = {}) {
  const l = lists[name];
  const url = api(`${name}/`);
  url.searchParams.set('offset', String(l.offset));
  url.searchParams.set('limit', String(l.limit));
  for (const [k, v] of Object.entries(extra)) if (v !== '' && v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

// ------------------------------------------------------------------------------ polling

async function poll() {
  if (key === '') return;
  const mine = ++current;
  let again = true;
  try {
    const [pools, numbers, templates, campaigns, webhooks, deadLetters] = await Promise.all([
      request(listUrl('pools', { since: samples.since })),
      request(listUrl('numbers', { q: lists.numbers.q, status: lists.numbers.status })),
      request(listUrl('templates')),
      request(listUrl('campaigns')),
      request(listUrl('webhooks')),
      request(api(`dead-letters/?limit=${DEAD_LETTERS_SHOWN}`)),
    ]);
    if (mine !== current) return;
    showError('');
    renderScope(pools.scope);
    renderPools(pools);
    renderNumbers(numbers);
    renderTemplates(templates);
    renderCampaigns(campaigns);
    renderWebhooks(webhooks);
    renderDeadLetters(deadLetters, pools.now);
    setLive(`live · ${time(pools.now)}`, true);
    document.body.dataset.updated = String(Date.now());
  } catch (e) {
    if (mine !== current) return;
    if (e instanceof ApiError && e.status === 401) {
      // Asking again with the same key would only be refused again: wait for another key.
      again = false;
      showError(`The key was refused: ${e.message}`);
      setLive('key refused', false);
      $('scope').textContent = 'no key';
      $('scope').className = 'badge';
    } else {
      showError(`Could not read the server: ${e.message}`);
      setLive('not updating', false);
    }
  } finally {
    if (mine === current && again) schedule(POLL_MS);
  }
}

function schedule(ms) {
  clearTimeout(timer);
  if (key !== '') timer = setTimeout(poll, ms);
}

/** Polls again now (after an action or a page change); an answer to the old question is dropped. */
function refresh() {
  schedule(0);
}

// ------------------------------------------------------------------------------ rendering

function renderScope(scope) {
  const el = $('scope');
  el.textContent = scope.operator ? 'operator · every company' : `company ${scope.company_id}`;
  el.className = scope.operator ? 'badge operator' : 'badge';
}

function pager(name, total, offset, limit) {
  const l = lists[name];
  l.total = total;
  const box = document.querySelector(`.pager[data-list="${name}"]`);
  if (total <= limit && offset === 0) {
    box.replaceChildren(total === 0 ? '' : `${number(total)} in all`);
    return;
  }
  const go = (to) => () => {
    l.offset = Math.max(0, to);
    if (name === 'pools') samples.since = 0;
    refresh();
  };
  box.replaceChildren(
    h('button', { type: 'button', class: 'secondary small', disabled: offset === 0, onclick: go(offset - limit) }, '‹ previous'),
    `${number(Math.min(total, offset + 1))}–${number(Math.min(total, offset + limit))} of ${number(total)}`,
    h('button', { type: 'button', class: 'secondary small', disabled: offset + limit >= total, onclick: go(offset + limit) }, 'next ›'),
  );
}

function emptyRow(columns, text) {
  return h('tr', { class: 'empty' }, h('td', { colspan: columns }, text));
}

/** Appends new samples to what the page keeps, dropping those older than an hour. */
function keep(into, fresh, now) {
  for (let i = 0; i < fresh.t.length; i++) {
    if (into.t.length > 0 && fresh.t[i] <= into.t[into.t.length - 1]) continue;
    into.t.push(fresh.t[i]);
    into.output.push(fresh.output[i]);
  }
  let drop = 0;
  while (drop < into.t.length && into.t[drop] < now - HOUR_MS) drop++;
  if (drop > 0) {
    into.t.splice(0, drop);
    into.output.splice(0, drop);
  }
}

function renderPools(data) {
  $('total-output').textContent = number(data.totals.output);
  $('total-output').dataset.value = String(data.totals.output);
  $('total-throughput').textContent = number(data.totals.throughput_per_hour);
  $('total-queued').textContent = number(data.totals.queued);
  $('total-retries').textContent = number(data.totals.waiting_retry);
  keep(samples.total, data.history, data.now);
  // Each pool's values follow the answer's one list of sample times (null: no sample of it then).
  for (const p of data.pools) {
    const k = `${p.business_id}:${p.template_type_id}`;
    if (!samples.pools.has(k)) samples.pools.set(k, { t: [], output: [] });
    const fresh = { t: [], output: [] };
    data.history.t.forEach((t, i) => {
      if (p.history[i] === null) return;
      fresh.t.push(t);
      fresh.output.push(p.history[i]);
    });
    keep(samples.pools.get(k), fresh, data.now);
  }
  for (const t of data.history.t) samples.since = Math.max(samples.since, t);
  // The charts end at the figure shown now, not at the last sample.
  drawChart($('total-chart'), samples.total, data.now, data.totals.output);
  const rows = data.pools.map((p) => {
    const k = `${p.business_id}:${p.template_type_id}`;
    const spark = s('svg', { class: 'spark', viewBox: '0 0 120 26', preserveAspectRatio: 'none' });
    drawSpark(spark, samples.pools.get(k), data.now, p.output);
    const held = p.blocked === null ? '' : `${p.blocked}${p.retry_at !== null ? ` until ${time(p.retry_at)}` : ''}`;
    return h(
      'tr',
      { 'data-pool': k },
      h('td', {}, `${p.business_name} `, h('span', { class: 'muted' }, `#${p.business_id}${data.scope.operator && p.company_id !== null ? ` · company ${p.company_id}` : ''}`)),
      h('td', {}, `${p.template_type_name} `, h('span', { class: 'muted' }, `#${p.template_type_id}`)),
      h('td', { class: 'num output', 'data-value': p.output }, number(p.output)),
      h('td', { class: 'num throughput', 'data-value': p.throughput_per_hour }, number(p.throughput_per_hour)),
      h('td', { class: 'num queued', 'data-value': p.queued }, number(p.queued)),
      h('td', { class: 'num retries', 'data-value': p.waiting_retry }, number(p.waiting_retry)),
      h('td', {}, held === '' ? '' : h('span', { class: 'pill held' }, held)),
      h('td', {}, spark),
    );
  });
  $('pools').replaceChildren(...(rows.length > 0 ? rows : [emptyRow(8, 'No business in this key’s scope.')]));
  pager('pools', data.total, data.offset, data.limit);
}

/** Points of a series over the last hour, ending with `current` at `now`, in a box of w x h. */
function points(series, now, current, w, h, top) {
  const ts = [...(series?.t ?? []), now];
  const vs = [...(series?.output ?? []), current];
  const max = Math.max(top ?? 0, ...vs, 1);
  const start = now - HOUR_MS;
  return {
    max,
    list: ts.map((t, i) => [((Math.max(t, start) - start) / HOUR_MS) * w, h - (vs[i] / max) * (h - 4) - 2]),
  };
}

function drawChart(svg, series, now, current) {
  const W = 800;
  const H = 140;
  const { max, list } = points(series, now, current, W, H - 16);
  const line = list.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  const area = list.length > 0 ? `${list[0][0].toFixed(1)},${H - 16} ${line} ${list[list.length - 1][0].toFixed(1)},${H - 16}` : '';
  svg.replaceChildren(
    s('line', { class: 'rule', x1: 0, y1: H - 16, x2: W, y2: H - 16 }),
    s('line', { class: 'rule', x1: 0, y1: 2, x2: W, y2: 2 }),
    s('polygon', { class: 'area', points: area }),
    s('polyline', { class: 'line', points: line }),
    Object.assign(s('text', { class: 'axis', x: 4, y: 13 }), { textContent: number(Math.round(max)) }),
    Object.assign(s('text', { class: 'axis', x: 4, y: H - 3 }), { textContent: '1 h ago' }),
    Object.assign(s('text', { class: 'axis', x: W - 30, y: H - 3 }), { textContent: 'now' }),
  );
}

function drawSpark(svg, series, now, current) {
  const { list } = points(series, now, current, 120, 26);
  svg.replaceChildren(s('polyline', { class: 'line', points: list.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ') }));
}

/** A usage bar: `used` of `limit`, coloured as it fills. */
function bar(window, name) {
  if (!window) return h('span', { class: 'muted' }, '–');
  const share = window.limit > 0 ? Math.min(1, window.used / window.limit) : 1;
  const fill = h('div', { class: `fill${share >= 1 ? ' full' : share >= 0.8 ? ' high' : ''}` });
  fill.style.width = `${(share * 100).toFixed(1)}%`;
  return h(
    'div',
    { class: `window ${name}`, 'data-used': window.used, 'data-limit': window.limit, title: `${number(window.used)} of ${number(window.limit)} used` },
    h('div', { class: 'bar' }, fill),
    h('div', { class: 'bar-label' }, `${number(window.used)} / ${number(window.limit)}`),
  );
}

const SOURCES = { api: 'by an operator', channel: 'by the provider', failover: 'after a failed send (provider)', timer: 'pause ended', fleet: 'fleet' };
const sourceText = (change) => (change ? `${SOURCES[change.source] ?? change.source}` : '');

function statusCell(status, pausedUntil, change, now) {
  const pill = h('span', { class: `pill ${status}` }, status === 'paused' && pausedUntil !== null ? `paused until ${time(pausedUntil)}` : status);
  if (status === 'paused' && pausedUntil !== null) pill.title = `${dateTime(pausedUntil)} (${relative(pausedUntil, now)})`;
  return [pill, change && status !== 'active' ? h('div', { class: 'bar-label' }, sourceText(change)) : null];
}

function renderNumbers(data) {
  $('numbers-active').textContent = number(data.counts.active);
  $('numbers-paused').textContent = number(data.counts.paused);
  const rows = data.numbers.map((n) => {
    const w = n.windows;
    const action =
      n.status === 'active'
        ? h('button', { type: 'button', class: 'small', 'data-action': 'pause', onclick: () => confirmAction({ kind: 'number', id: n.phone, action: 'pause' }) }, 'Pause…')
        : h('button', { type: 'button', class: 'small secondary', 'data-action': 'resume', onclick: () => confirmAction({ kind: 'number', id: n.phone, action: 'resume' }) }, 'Resume…');
    const said = n.provider ? h('span', { title: `reported ${dateTime(n.provider.at)}` }, n.provider.reason) : null;
    // Blocked for every message (credentials refused, provider unreachable): only an operator ends it.
    const blocked = n.blocked
      ? h(
          'span',
          { class: 'pill down', 'data-blocked': n.blocked.cause, title: `since ${dateTime(n.blocked.since)} · ${n.blocked.failures} failed sends · ${n.blocked.reason}` },
          n.blocked.cause === 'credentials' ? `blocked: credentials refused (code ${n.blocked.code ?? '–'})` : 'blocked: provider unreachable',
        )
      : null;
    // Flagged by the platform for quality (FLAGGED until UNFLAGGED): shown, nothing steered.
    const flagged = n.flagged ? h('span', { class: 'pill held', 'data-flagged': '', title: `since ${dateTime(n.flagged.at)}` }, `flagged: ${n.flagged.reason}`) : null;
    const notes = [blocked, flagged, said].filter((x) => x !== null);
    const provider = notes.length > 0 ? h('span', {}, ...notes.flatMap((x, i) => (i === 0 ? [x] : [' ', x]))) : h('span', { class: 'muted' }, '–');
    return h(
      'tr',
      { 'data-phone': n.phone, 'data-status': n.status },
      h('td', {}, n.phone),
      h('td', {}, `#${n.business_id}`, data.scope.operator && n.company_id !== null ? h('span', { class: 'muted' }, ` · company ${n.company_id}`) : null),
      h('td', { class: 'status' }, statusCell(n.status, n.paused_until, n.last_change, data.now)),
      h('td', {}, w ? bar(w.second, 'second') : h('span', { class: 'muted' }, '–')),
      h('td', {}, w ? bar(w.hour, 'hour') : h('span', { class: 'muted' }, `${number(n.throughput_per_hour)}/h`)),
      h('td', {}, w ? bar(w.day, 'day') : h('span', { class: 'muted' }, `${number(n.messaging_limit_24h)}/24 h`)),
      h('td', { class: 'num available', 'data-value': n.available }, number(n.available)),
      h('td', { class: 'wrap' }, provider),
      h('td', {}, action),
    );
  });
  $('numbers').replaceChildren(...(rows.length > 0 ? rows : [emptyRow(9, 'No number matches.')]));
  pager('numbers', data.total, data.offset, data.limit);
}

function renderTemplates(data) {
  for (const k of ['active', 'paused', 'disabled']) $(`templates-${k}`).textContent = number(data.counts[k]);
  const rows = data.templates.map((t) => {
    const why = t.status === 'active' ? '' : [sourceText(t.last_change), t.last_change?.reason ? `: ${t.last_change.reason}` : ''].join('');
    let action = null;
    if (t.actionable) {
      action =
        t.status === 'active'
          ? h('button', { type: 'button', class: 'small', 'data-action': 'pause', onclick: () => confirmAction({ kind: 'template', id: t.id, action: 'pause', name: t.name }) }, 'Pause…')
          : h('button', { type: 'button', class: 'small secondary', 'data-action': 'resume', onclick: () => confirmAction({ kind: 'template', id: t.id, action: 'resume', name: t.name }) }, 'Resume…');
    }
    return h(
      'tr',
      { 'data-template': t.id, 'data-status': t.status },
      h('td', {}, `${t.name} `, h('span', { class: 'muted' }, `#${t.id}`)),
      h('td', {}, t.business_ids.map((b) => `#${b}`).join(', ')),
      h('td', { class: 'status' }, statusCell(t.status, t.paused_until, null, data.now)),
      h('td', { class: 'wrap' }, why),
      h('td', {}, action),
    );
  });
  $('templates').replaceChildren(...(rows.length > 0 ? rows : [emptyRow(5, 'No template in this key’s scope.')]));
  pager('templates', data.total, data.offset, data.limit);
}

/** What an ETA without a time says. */
const ETA_WORDS = {
  done: 'done',
  sending: 'sending the last ones',
  retries: 'retries waiting',
  held: 'held: a resume or a limit change is needed',
  unknown: 'after its first send',
};

function renderCampaigns(data) {
  const note = $('campaigns-note');
  note.hidden = data.kept;
  note.textContent = data.kept ? '' : 'Campaign statistics are shared in Redis on this server: they are not listed here.';
  const rows = data.campaigns.map((c) => {
    const st = c.statistics;
    const refused = st.count_invalid_phone + st.count_duplicated + st.count_blocked + st.count_already_sent + st.count_does_not_exist;
    const parts = [
      ['sent', st.count_sent],
      ['failed', st.count_failed],
      ['expired', st.count_expired],
      ['refused', refused],
      ['remaining', st.count_remaining],
    ];
    const stack = h('div', { class: 'stack', title: parts.map(([n, v]) => `${n} ${number(v)}`).join(' · ') });
    for (const [name, value] of parts) {
      if (value === 0 || st.count_total === 0) continue;
      const seg = h('span', { class: `seg-${name}`, 'data-segment': name, 'data-value': value });
      seg.style.width = `${((value / st.count_total) * 100).toFixed(2)}%`;
      stack.append(seg);
    }
    const done = st.count_remaining === 0;
    const eta = c.eta.at !== null ? `${relative(c.eta.at, data.now)} (${time(c.eta.at)})` : (ETA_WORDS[c.eta.basis] ?? c.eta.basis);
    return h(
      'tr',
      { 'data-campaign': `${c.company_id}:${c.campaign_id}`, 'data-processed': st.count_processed, 'data-total': st.count_total, 'data-sent': st.count_sent },
      h('td', {}, `${st.campaign_name} `, h('span', { class: 'muted' }, `#${c.campaign_id}${data.scope.operator ? ` · company ${c.company_id}` : ''}`)),
      h('td', {}, h('span', { class: `pill ${done ? 'done' : 'active'}` }, done ? 'done' : st.status)),
      h(
        'td',
        {},
        stack,
        h(
          'div',
          { class: 'stack-detail' },
          `${number(st.count_processed)} of ${number(st.count_total)} processed · delivered ${number(st.count_delivered)} · read ${number(st.count_read)} · replied ${number(st.count_replied)}`,
        ),
      ),
      h('td', { class: 'num', 'data-value': c.queued }, number(c.queued)),
      h('td', { class: 'num retries', 'data-value': c.waiting_retry }, number(c.waiting_retry)),
      h('td', { class: 'eta' }, eta),
    );
  });
  $('campaigns').replaceChildren(...(rows.length > 0 ? rows : [emptyRow(6, 'No campaign yet.')]));
  pager('campaigns', data.total, data.offset, data.limit);
}

function renderWebhooks(data) {
  $('webhooks-pending').textContent = number(data.pending_total);
  const rows = data.targets.map((t) => {
    const state = t.down
      ? h('span', { class: 'pill down', title: t.next_probe_at !== null ? `next probe ${time(t.next_probe_at)}` : '' }, `down · ${t.failures} failure${t.failures === 1 ? '' : 's'}`)
      : h(
          'span',
          { class: 'pill up', title: t.failures > 0 ? `${t.failures} recent event${t.failures === 1 ? '' : 's'} failing, the others delivered` : '' },
          t.retrying > 0 ? `up · ${t.retrying} retrying` : 'up',
        );
    const last = t.last_error ?? (t.last_dead_letter ? `dead letter ${time(t.last_dead_letter.at)}: ${t.last_dead_letter.error}` : '');
    return h(
      'tr',
      { 'data-origin': t.origin },
      h('td', {}, t.origin),
      h('td', {}, t.families.join(', ')),
      h('td', { class: 'num backlog', 'data-value': t.backlog }, number(t.backlog)),
      h('td', { class: 'num rate', 'data-value': t.deliveries_per_second }, fmt1.format(t.deliveries_per_second)),
      h('td', {}, state),
      h('td', { class: 'wrap' }, last),
    );
  });
  $('webhooks').replaceChildren(...(rows.length > 0 ? rows : [emptyRow(6, 'No webhook receiver configured or waiting.')]));
  pager('webhooks', data.total, data.offset, data.limit);
}

function renderDeadLetters(data, now) {
  const list = data.dead_letters;
  $('dead-letters-shown').textContent = data.next_before === null ? number(list.length) : `newest ${number(list.length)}`;
  $('dead-letters-replay-all').disabled = list.length === 0;
  const rows = list.map((d) =>
    h(
      'tr',
      { 'data-event-id': d.event_id, 'data-family': d.family },
      h('td', {}, d.family),
      h('td', { class: 'wrap' }, d.url),
      h('td', { title: d.dead_lettered_at }, relative(Date.parse(d.dead_lettered_at), now)),
      h('td', { class: 'num attempts', 'data-value': d.attempts }, number(d.attempts)),
      h('td', { class: 'wrap last-error' }, d.last_error),
      h(
        'td',
        {},
        h('button', { type: 'button', class: 'small', 'data-action': 'replay', onclick: () => confirmAction({ kind: 'dead-letter', id: d.event_id, action: 'replay', family: d.family }) }, 'Replay…'),
      ),
    ),
  );
  $('dead-letters').replaceChildren(...(rows.length > 0 ? rows : [emptyRow(6, 'No dead letter: every webhook event was delivered or is still being tried.')]));
}

// ------------------------------------------------------------------------------ actions

let pending;

/** Opens the confirmation dialog for a pause, a resume or a replay. */
function confirmAction(what) {
  pending = what;
  const label = what.kind === 'number' ? `number ${what.id}` : `template ${what.name} (#${what.id})`;
  if (what.kind === 'dead-letter' || what.kind === 'dead-letters') {
    $('confirm-title').textContent = 'Replay';
    $('confirm-text').textContent =
      what.kind === 'dead-letter'
        ? `Replay the ${what.family} event ${what.id}? It is delivered again under its event id.`
        : 'Replay every dead letter shown and any older one? Each is delivered again under its event id.';
  } else {
    $('confirm-title').textContent = what.action === 'pause' ? 'Pause' : 'Resume';
    $('confirm-text').textContent = what.action === 'pause' ? `Pause ${label}? It leaves every pool it is in at once: output falls by its share.` : `Resume ${label}? It rejoins its pools at once.`;
  }
  $('confirm-end').hidden = what.action !== 'pause';
  $('confirm-duration').value = '';
  $('confirm-until').hidden = true;
  $('confirm-until').value = '';
  $('confirm-error').hidden = true;
  $('confirm-ok').disabled = false;
  $('confirm').showModal();
}

async function runAction() {
  const what = pending;
  if (!what) return;
  if (what.kind === 'dead-letter') return void (await request(api(`dead-letters/${encodeURIComponent(what.id)}/replay/`), { method: 'POST' }));
  if (what.kind === 'dead-letters') return void (await request(api('dead-letters/replay/'), { method: 'POST' }));
  let body;
  if (what.action === 'pause') {
    const choice = $('confirm-duration').value;
    if (choice === 'until') {
      const at = new Date($('confirm-until').value);
      if (Number.isNaN(at.getTime())) throw new Error('Choose when the pause ends.');
      body = { until: at.toISOString() };
    } else if (choice !== '') body = { duration_seconds: Number(choice) };
  }
  const path = what.kind === 'number' ? `numbers/${encodeURIComponent(what.id)}/${what.action}/` : `templates/${what.id}/${what.action}/`;
  await request(operator(path), { method: 'POST', body });
}

// ------------------------------------------------------------------------------ wiring

function useKey(value) {
  key = value.trim();
  if (key === '') sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
  samples.pools.clear();
  samples.total = { t: [], output: [] };
  samples.since = 0;
  for (const l of Object.values(lists)) l.offset = 0;
  if (key === '') {
    clearTimeout(timer);
    setLive('waiting for a key');
    $('scope').textContent = 'no key';
    $('scope').className = 'badge';
    return;
  }
  setLive('connecting…');
  refresh();
}

function start() {
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $('key-input');
    useKey(input.value);
    input.value = '';
  });
  $('key-forget').addEventListener('click', () => useKey(''));
  let typing;
  $('numbers-q').addEventListener('input', (e) => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      lists.numbers.q = e.target.value.trim();
      lists.numbers.offset = 0;
      refresh();
    }, 250);
  });
  $('numbers-status').addEventListener('change', (e) => {
    lists.numbers.status = e.target.value;
    lists.numbers.offset = 0;
    refresh();
  });
  $('confirm-duration').addEventListener('change', (e) => {
    $('confirm-until').hidden = e.target.value !== 'until';
  });
  $('dead-letters-replay-all').addEventListener('click', () => confirmAction({ kind: 'dead-letters', action: 'replay-all' }));
  $('confirm-cancel').addEventListener('click', () => $('confirm').close());
  $('confirm-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('confirm-ok').disabled = true;
    try {
      await runAction();
      $('confirm').close();
      refresh();
    } catch (err) {
      $('confirm-error').textContent = err instanceof ApiError ? `${err.message}` : String(err.message ?? err);
      $('confirm-error').hidden = false;
      $('confirm-ok').disabled = false;
    }
  });
  if (key !== '') useKey(key);
}

start();
