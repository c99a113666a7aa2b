/**
 * One client cannot make an answer that stalls the others: 10,000 bad contacts or SMS items, or a
 * body full of faults, answer in kilobytes with the counts of what was left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startServer, type Started } from './helpers.js';

const send = (contacts: unknown[]) => ({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts });

describe('bounded answers', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.server.close());

  it('POST /messenger/messages/ with 10,000 invalid contacts: the first 100 rejections, the rest counted per reason', async () => {
    const contacts = Array.from({ length: 10_000 }, (_, i) => ({ phone_number: `12${i}`, document: '123', template_variables: ['', '{{1}}'] }));
    const res = await api(s.url, '/messenger/messages/', { body: send(contacts) });
    expect(res.status).toBe(202);
    expect(res.text.length).toBeLessThan(200_000); // was 15.9 MB
    expect(res.json).toMatchObject({
      accepted: 0,
      rejected: 10_000,
      rejections_truncated: true,
      rejection_counts: { invalid_phone: 10_000, invalid_document: 0, invalid_variables: 0, blocked: 0, duplicated: 0 },
    });
    expect(res.json.rejections).toHaveLength(100);
    expect(res.json.rejections[99]).toMatchObject({ index: 99, reason: 'invalid_phone', problem_count: 5 });
    expect(res.json.rejections[99].problems.map((p: any) => p.path)).toEqual([
      '$.contacts[99].phone_number',
      '$.contacts[99].document',
      '$.contacts[99].template_variables',
      '$.contacts[99].template_variables[0]',
      '$.contacts[99].template_variables[1]',
    ]);
  });

  it('a few rejected contacts are all listed', async () => {
    const res = await api(s.url, '/messenger/messages/', {
      body: send([
        { phone_number: '5511987654321', template_variables: ['Ana'] },
        { phone_number: '123', template_variables: ['Bia'] },
      ]),
    });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: 1, rejected: 1, rejections_truncated: false, rejection_counts: { invalid_phone: 1 } });
    expect(res.json.rejections).toEqual([expect.objectContaining({ index: 1, reason: 'invalid_phone', problem_count: 1 })]);
  });

  it('a million faults in 10,000 contacts: each contact rejected alone, 100 listed with their first problems and counts, no text over 512 characters', async () => {
    const keys = Object.fromEntries(Array.from({ length: 100 }, (_, k) => [`k${k}`, 0]));
    const contacts = Array.from({ length: 10_000 }, () => ({ phone_number: '5511987654321', ...keys }));
    const res = await api(s.url, '/messenger/messages/', { body: send(contacts) });
    expect(res.status).toBe(202);
    // 100 rejections of 5 problems each: bounded, whatever the body.
    expect(res.text.length).toBeLessThan(200_000);
    expect(res.json).toMatchObject({ accepted: 0, rejected: 10_000, rejections_truncated: true, rejection_counts: { invalid_data: 10_000 } });
    expect(res.json.rejections).toHaveLength(100);
    expect(res.json.rejections[0]).toMatchObject({ index: 0, reason: 'invalid_data', problem_count: 100 });
    expect(res.json.rejections[0].problems[0].path).toBe('$.contacts[0].k0');

    const long = await api(s.url, '/messenger/messages/', { body: send([{ phone_number: '5511987654321', ['x'.repeat(1_000_000)]: 1 }]) });
    expect(long.status).toBe(202);
    expect(long.text.length).toBeLessThan(4_000);
    for (const text of Object.values<string>(long.json.rejections[0].problems[0])) expect(text.length).toBeLessThanOrEqual(512);
  });

  it('422 for a body with 100,000 faults outside its contacts: 100 problems and the exact count', async () => {
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, k) => [`k${k}`, 0]));
    const res = await api(s.url, '/messenger/messages/', { body: { ...send([{ phone_number: '5511987654321' }]), ...keys } });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ code: 'invalid_body', problem_count: 100_000 });
    expect(res.json.error.problems).toHaveLength(100);
    expect(res.json.error.problems[0].path).toBe('$.k0');
  });

  it('POST /sms/messages/ with 10,000 invalid items: the first 100 rejections, the rest counted', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ message: 'hi', phone: `12${i}` }));
    const res = await api(s.url, '/sms/messages/', { body: items });
    expect(res.status).toBe(202);
    expect(res.text.length).toBeLessThan(100_000);
    expect(res.json).toMatchObject({ accepted: 0, rejected: 10_000, rejections_truncated: true, rejection_counts: { invalid_phone: 10_000, invalid_document: 0, duplicated: 0 } });
    expect(res.json.rejections).toHaveLength(100);
  });

  it('422 for 10,000 refused SMS callback URLs: 100 problems and the count', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ message: 'hi', phone: '5511987654321', url_callback_dlr: `ftp://x/${i}` }));
    const res = await api(s.url, '/sms/messages/', { body: items });
    expect(res.status).toBe(422);
    expect(res.text.length).toBeLessThan(100_000);
    expect(res.json.error).toMatchObject({ code: 'invalid_body', problem_count: 10_000 });
    expect(res.json.error.problems).toHaveLength(100);
  });
});
