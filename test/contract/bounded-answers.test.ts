/**
 * Answers stay small whatever the body: rejections and problems are listed up to a bound and
 * counted beyond it, and parsers build no problem they will not list.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_PROBLEMS_LISTED,
  MAX_PROBLEMS_PER_REJECTION,
  MAX_PROBLEM_TEXT,
  MAX_REJECTIONS_IN_BODY,
  errorResponse,
  parseSendRequest,
  parseSmsBatch,
  problemTotal,
  sendResponse,
  smsResponse,
} from '../../src/contract/index.js';
import { problem } from '../../src/core/problems.js';
import { lookupFor } from './arbitraries.js';

const request = (contacts: unknown[]) => ({ business_id: 1, template_type_id: 2, campaign_id: 3, contacts });

describe('send answer', () => {
  it('lists the first 100 rejections in full, says it left the rest out, and counts every one per reason', () => {
    const contacts = [
      ...Array.from({ length: 150 }, (_, i) => ({ phone_number: `12${i}`, template_variables: ['a'] })),
      { phone_number: '14155552671', template_variables: ['a'] },
      { phone_number: '14155552671', template_variables: ['a'] },
      { phone_number: '14155552672', template_variables: [''] },
    ];
    const r = parseSendRequest(request(contacts), { templateTypes: lookupFor(1, 2, 1) });
    if (!r.ok) throw new Error('refused');
    const { body } = sendResponse(r.value, 'id');
    expect(body).toMatchObject({ accepted: 1, rejected: 152, rejections_truncated: true });
    expect(body.rejection_counts).toEqual({ invalid_phone: 150, invalid_document: 0, invalid_variables: 1, invalid_data: 0, blocked: 0, duplicated: 1, already_sent: 0 });
    expect(body.rejections).toHaveLength(MAX_REJECTIONS_IN_BODY);
    expect(body.rejections.map((x) => x.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(body.rejections[0]).toMatchObject({ index: 0, reason: 'invalid_phone', problem_count: 1, problems: [{ path: '$.contacts[0].phone_number' }] });
  });

  it('says nothing was left out when every rejection is listed', () => {
    const r = parseSendRequest(request([{ phone_number: 'x' }]), { templateTypes: lookupFor(1, 2, 0) });
    if (!r.ok) throw new Error('refused');
    expect(sendResponse(r.value, 'id').body).toMatchObject({
      rejected: 1,
      rejections: [{ index: 0, reason: 'invalid_phone', problem_count: 1 }],
      rejections_truncated: false,
      rejection_counts: { invalid_phone: 1, invalid_document: 0, invalid_variables: 0, blocked: 0, duplicated: 0 },
    });
  });

  it('keeps the first problems of a contact and counts the rest, building none of them', () => {
    const contact = { phone_number: '12', document: '1', template_variables: Array.from({ length: 100 }, () => '') };
    const r = parseSendRequest(request([contact]), { templateTypes: lookupFor(1, 2, 100) });
    if (!r.ok) throw new Error('refused');
    const [rejection] = r.value.rejected;
    expect(rejection).toMatchObject({ reason: 'invalid_phone', problemCount: 102 });
    expect(rejection!.problems.map((p) => p.path)).toEqual([
      '$.contacts[0].phone_number',
      '$.contacts[0].document',
      '$.contacts[0].template_variables[0]',
      '$.contacts[0].template_variables[1]',
      '$.contacts[0].template_variables[2]',
    ]);
    expect(rejection!.problems).toHaveLength(MAX_PROBLEMS_PER_REJECTION);
    expect(sendResponse(r.value, 'id').body.rejections[0]).toMatchObject({ problem_count: 102, problems: expect.any(Array) });
  });
});

describe('SMS answer', () => {
  it('caps the rejections the same way, with counts of the SMS reasons', () => {
    const items = [...Array.from({ length: 120 }, (_, i) => ({ message: 'hi', phone: `12${i}` })), { message: 'hi', phone: '14155552671' }];
    const r = parseSmsBatch(items);
    if (!r.ok) throw new Error('refused');
    const { body } = smsResponse(r.value, 'id');
    expect(body).toMatchObject({ accepted: 1, rejected: 120, rejections_truncated: true, rejection_counts: { invalid_phone: 120, invalid_document: 0, duplicated: 0 } });
    expect(body.rejections).toHaveLength(100);
    expect(body.messages).toEqual([{ index: 120, encoding: 'GSM-7', parts: 1 }]);
  });
});

describe('error answer', () => {
  it('counts problems a parser did not list, and lists them in the order found', () => {
    const keys = Object.fromEntries(Array.from({ length: 5000 }, (_, k) => [`k${k}`, 0]));
    const body = { ...request([{ phone_number: '14155552671' }]), ...keys };
    const r = parseSendRequest(body, { templateTypes: lookupFor(1, 2, 0) });
    if (r.ok) throw new Error('accepted');
    expect(r.problems).toHaveLength(MAX_PROBLEMS_LISTED + 1);
    expect(r.problems[MAX_PROBLEMS_LISTED]).toMatchObject({ path: '$', actual: '4000 more' });
    expect(problemTotal(r.problems)).toBe(5000);
    expect(problemTotal([...r.problems].reverse())).toBe(5000);
    const answer = errorResponse('invalid_body', r.problems);
    expect(answer.body.error.problem_count).toBe(5000);
    expect(answer.body.error.problems).toHaveLength(100);
    expect(answer.body.error.problems![0]!.path).toBe('$.k0');
    expect(answer.body.error.message).toContain('5000 problems; first: $.k0');
  });

  it('refuses a contact that breaks the schema alone, listing its first problems and counting the rest', () => {
    const keys = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, 0]));
    const body = request([...Array.from({ length: 100 }, () => ({ phone_number: '14155552671', ...keys })), { phone_number: '14155552672' }]);
    const r = parseSendRequest(body, { templateTypes: lookupFor(1, 2, 0) });
    if (!r.ok) throw new Error('refused');
    expect(r.value.accepted.map((a) => a.index)).toEqual([100]);
    expect(r.value.rejected).toHaveLength(100);
    expect(r.value.rejected[0]).toMatchObject({ index: 0, reason: 'invalid_data', problemCount: 50 });
    expect(r.value.rejected[0]!.problems.map((p) => p.path)).toEqual(['$.contacts[0].k0', '$.contacts[0].k1', '$.contacts[0].k2', '$.contacts[0].k3', '$.contacts[0].k4']);
  });

  it('caps SMS problems from the schema walk and the URL pass together', () => {
    const items = Array.from({ length: 1500 }, (_, i) => ({ message: i % 2 === 0 ? 'hi' : 5, phone: '14155552671', url_callback_dlr: `ftp://x/${i}` }));
    const r = parseSmsBatch(items);
    if (r.ok) throw new Error('accepted');
    expect(r.problems).toHaveLength(MAX_PROBLEMS_LISTED + 1);
    expect(problemTotal(r.problems)).toBe(750 + 1500);
    expect(r.problems[0]!.path).toBe('$[0].url_callback_dlr');
    expect(r.problems.at(-1)).toMatchObject({ path: '$', actual: '1250 more' });
  });

  it('cuts any text of a problem to 512 characters', () => {
    const long = problem(`$.contacts[0].${'x'.repeat(100_000)}`, 'no such field', 1);
    const answer = errorResponse('invalid_body', [long]);
    const shown = answer.body.error.problems![0]!;
    for (const text of [shown.path, shown.message]) {
      expect(text).toHaveLength(MAX_PROBLEM_TEXT);
      expect(text.endsWith('…')).toBe(true);
    }
    expect(answer.body.error.message.length).toBeLessThan(MAX_PROBLEM_TEXT + 100);
    expect(JSON.stringify(answer.body).length).toBeLessThan(4 * MAX_PROBLEM_TEXT);
  });

  it('never cuts a surrogate pair in half', () => {
    const text = `${'x'.repeat(MAX_PROBLEM_TEXT - 2)}😀😀`;
    const shown = errorResponse('invalid_body', [problem(text, 'e', 1)]).body.error.problems![0]!.path;
    expect(shown).toBe(`${'x'.repeat(MAX_PROBLEM_TEXT - 2)}…`);
  });
});
