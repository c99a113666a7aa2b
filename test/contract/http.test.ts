import { describe, expect, it } from 'vitest';
import {
  ERROR_STATUS,
  apiKeyMatcher,
  checkApiKey,
  constantTimeEqual,
  errorResponse,
  isJsonContentType,
  parseJsonBody,
  parseSendRequest,
  parseSmsBatch,
  sendResponse,
  smsResponse,
  utf8Length,
} from '../../src/contract/index.js';
import { problem } from '../../src/core/problems.js';
import { lookupFor } from './arbitraries.js';

describe('API key header', () => {
  const known = apiKeyMatcher(['k-123', 'k-456']);
  it('accepts a known key from a Node header record or a Fetch Headers-like object', () => {
    expect(checkApiKey({ 'x-api-key-id': 'k-123' }, known)).toEqual({ ok: true, key: 'k-123' });
    expect(checkApiKey({ 'X-Api-Key-Id': 'k-456' }, known)).toEqual({ ok: true, key: 'k-456' });
    expect(checkApiKey(new Headers({ 'x-api-key-id': 'k-123' }), known)).toEqual({ ok: true, key: 'k-123' });
  });
  it('missing or empty → missing_api_key; unknown, repeated or too long → invalid_api_key', () => {
    expect(checkApiKey({}, known)).toEqual({ ok: false, code: 'missing_api_key' });
    expect(checkApiKey({ 'x-api-key-id': '' }, known)).toEqual({ ok: false, code: 'missing_api_key' });
    expect(checkApiKey({ 'x-api-key-id': 'k-12' }, known)).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(checkApiKey({ 'x-api-key-id': ['k-123', 'k-456'] }, known)).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(checkApiKey({ 'x-api-key-id': 'k-123, k-456' }, known)).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(checkApiKey({ 'x-api-key-id': 'k'.repeat(600) }, () => true)).toEqual({ ok: false, code: 'invalid_api_key' });
    expect(ERROR_STATUS.missing_api_key).toBe(401);
  });
  it('compares keys of any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });
});

describe('JSON body', () => {
  it('decodes JSON, refuses invalid JSON (400) and bodies over the limit (413)', () => {
    expect(parseJsonBody('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonBody('{"a":')).toMatchObject({ ok: false, code: 'invalid_json', problems: [{ path: '$', expected: 'valid JSON' }] });
    expect(parseJsonBody('"ção"', { maxBodyBytes: 6 })).toMatchObject({ ok: false, code: 'body_too_large' });
    expect(parseJsonBody('"ção"', { maxBodyBytes: 7 })).toEqual({ ok: true, value: 'ção' });
    expect(parseJsonBody('{}', { maxBodyBytes: 10 }, 11)).toMatchObject({ ok: false, code: 'body_too_large' });
  });
  it('counts UTF-8 bytes like TextEncoder', () => {
    for (const s of ['', 'abc', 'ção', '😀', '€uro', '\ud800x']) expect(utf8Length(s), s).toBe(new TextEncoder().encode(s).length);
  });
  it('recognises JSON content types', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON; charset=UTF-8')).toBe(true);
    expect(isJsonContentType('application/vnd.api+json')).toBe(true);
    expect(isJsonContentType('application/json; charset=latin1')).toBe(false);
    expect(isJsonContentType('text/plain')).toBe(false);
    expect(isJsonContentType(undefined)).toBe(false);
  });
});

describe('response bodies', () => {
  it('error body: code, status, message and at most 100 problems with the total', () => {
    const many = Array.from({ length: 150 }, (_, i) => problem(`$.contacts[${i}].phone_number`, 'a string', i));
    const answer = errorResponse('invalid_body', many);
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('invalid_body');
    expect(answer.body.error.problems).toHaveLength(100);
    expect(answer.body.error.problem_count).toBe(150);
    expect(answer.body.error.message).toContain('150 problems; first: $.contacts[0].phone_number');
    expect(errorResponse('invalid_api_key')).toEqual({ status: 401, body: { error: { code: 'invalid_api_key', message: 'The x-api-key-id header does not carry a valid API key.' } } });
  });

  it('send answer: 202, request id, counts and per-contact reasons', () => {
    const r = parseSendRequest(
      { business_id: 1, template_type_id: 2, campaign_id: 3, contacts: [{ phone_number: '14155552671' }, { phone_number: 'x' }, { phone_number: '14155552671' }] },
      { templateTypes: lookupFor(1, 2, 0) },
    );
    if (!r.ok) throw new Error('refused');
    const answer = sendResponse(r.value, '7d1c6a9e-3b1f-4c55-9a43-1f0d2b7c8e11');
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ request_id: '7d1c6a9e-3b1f-4c55-9a43-1f0d2b7c8e11', accepted: 1, rejected: 2 });
    expect(answer.body.rejections.map((x) => [x.index, x.reason, x.duplicate_of])).toEqual([
      [1, 'invalid_phone', undefined],
      [2, 'duplicated', 0],
    ]);
    expect(answer.body.rejections[0]?.message).toMatch(/^\$\.contacts\[1\]\.phone_number: expected /);
  });

  it('SMS answer: 202, encoding and parts per accepted item, total parts', () => {
    const r = parseSmsBatch([
      { message: 'a'.repeat(200), phone: '14155552671' },
      { message: 'ção', phone: '14155552672' },
      { message: 'x', phone: '1' },
    ]);
    if (!r.ok) throw new Error('refused');
    expect(smsResponse(r.value, 'id').body).toMatchObject({
      accepted: 2,
      rejected: 1,
      parts: 3,
      messages: [
        { index: 0, encoding: 'GSM-7', parts: 2 },
        { index: 1, encoding: 'UCS-2', parts: 1 },
      ],
    });
  });
});
