import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { attendanceProblems, buildAttendanceNotification, messagePattern, type AttendanceInput, type AttendanceSender, type SurveyInput } from '../../src/events/attendance.js';
import { SURVEY_STATUSES } from '../../src/events/schemas/attendance.js';
import { AttendanceNotificationSchema } from '../../src/events/schemas/attendance.js';
import { T0, expectRefusedOrValid, seededRandom } from './helpers.js';

const TICKET = '3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

function survey(status: SurveyInput['status']): SurveyInput {
  const common = { id: 1, name: 'NPS', startedAt: T0, answers: [{ question: 'Nota?', questionType: 'scale' as const, answer: '9', answeredAt: T0 + 1 }] };
  if (status === 'completed') return { ...common, status, completedAt: T0 + 2 };
  if (status === 'expired') return { ...common, status, expiredAt: T0 + 2 };
  return { ...common, status };
}

const senders: AttendanceSender[] = [{ kind: 'campaign' }, { kind: 'client' }, { kind: 'bot' }, { kind: 'attendant', userId: 77 }];

function attendance(over: Partial<AttendanceInput> = {}): AttendanceInput {
  return {
    id: 10,
    ticketId: 20,
    ticketUuid: TICKET,
    origin: { kind: 'active', campaignId: 5, requestId: null, costCenterId: 2 },
    number: '5511999990000',
    closedAt: T0 + 60_000,
    messages: senders.map((sender, i) => ({ sender, from: 'a', to: 'b', type: 'text' as const, text: `m${i}`, sentAt: T0 + i })),
    ...over,
  };
}

describe('attendance notification', () => {
  it('throws ArgumentError for fractional ids, a ticket UUID that is not one, unknown kinds and types', () => {
    const r = seededRandom(1);
    const active = { kind: 'active' as const, campaignId: 5, requestId: null, costCenterId: 2 };
    expect(() => buildAttendanceNotification(attendance({ origin: { ...active, campaignId: 5.5 } }), r)).toThrow(/origin\.campaignId\)` to be an integer, got 5\.5/);
    expect(() => buildAttendanceNotification(attendance({ origin: { ...active, costCenterId: 0.1 } }), r)).toThrow(/origin\.costCenterId/);
    expect(() => buildAttendanceNotification(attendance({ user: { id: 1.5, name: 'Ana' } }), r)).toThrow(/user\.id/);
    expect(() => buildAttendanceNotification(attendance({ occurrence: { id: Number.NaN, name: 'x' } }), r)).toThrow(/occurrence\.id/);
    expect(() => buildAttendanceNotification(attendance({ survey: { ...survey('completed'), id: 2.5 } }), r)).toThrow(/survey\.id/);
    expect(() => buildAttendanceNotification(attendance({ ticketUuid: 'ticket-1' }), r)).toThrow(/ticketUuid\)` to be a UUID/);
    expect(() => buildAttendanceNotification(attendance({ origin: { kind: 'inbound' } as never }), r)).toThrow(/origin\.kind/);
    const audio = attendance().messages.map((m, i) => (i === 1 ? { ...m, type: 'sticker' as 'text' } : m));
    expect(() => buildAttendanceNotification(attendance({ messages: audio }), r)).toThrow(/messages\[1\]\.type/);
    expect(r.calls).toBe(0);
  });

  for (const status of SURVEY_STATUSES) {
    it(`any one bad field (${status} survey): an ArgumentError naming it, or a valid payload`, () => {
      const input = attendance({
        survey: survey(status),
        data: { ref: 'A-1' },
        document: '52998224725',
        occurrence: { id: 4, name: 'Resolved' },
        user: { id: 77, name: 'Ana' },
        messages: [...attendance().messages, { sender: { kind: 'client' }, from: 'b', to: 'a', type: 'image', text: '', file: 'https://x.test/f.png', sentAt: T0 + 9 }],
      });
      expect(expectRefusedOrValid(input, AttendanceNotificationSchema, (i, random) => buildAttendanceNotification(i, random))).toBeGreaterThan(100);
      const receptive = attendance({ origin: { kind: 'receptive' } });
      expectRefusedOrValid(receptive, AttendanceNotificationSchema, (i, random) => buildAttendanceNotification(i, random));
    });
  }

  for (const status of SURVEY_STATUSES) {
    it(`builds a valid active attendance with a ${status} survey`, () => {
      const p = buildAttendanceNotification(attendance({ survey: survey(status) }), seededRandom(1));
      expect(attendanceProblems(p)).toEqual([]);
      expect(p.survey?.status).toBe(status);
      expect(p.survey?.completed_at !== null).toBe(status === 'completed');
      expect(p.survey?.expired_at !== null).toBe(status === 'expired');
    });
  }

  it('writes the four message patterns of spec 6.2', () => {
    const p = buildAttendanceNotification(attendance(), seededRandom(1));
    expect(p.messages.map((m) => [m.from_me, m.from_bot, m.user])).toEqual([
      [true, false, null],
      [false, false, null],
      [true, true, null],
      [true, false, 77],
    ]);
    expect(p.messages.map(messagePattern)).toEqual(['campaign', 'client', 'bot', 'attendant']);
    expect(p.datetime).toBe('2025-01-01T09:01:00.000-03:00');
  });

  it('a receptive attendance has null campaign, request and cost center', () => {
    const p = buildAttendanceNotification(attendance({ origin: { kind: 'receptive' }, survey: null }), seededRandom(1));
    expect(p).toMatchObject({ from_me: false, campaign_id: null, request_id: null, cost_center_id: null });
    expect(attendanceProblems(p)).toEqual([]);
  });

  it('rejects messages that fit no pattern, with their JSON path', () => {
    const p = buildAttendanceNotification(attendance(), seededRandom(1));
    const bad = structuredClone(p) as unknown as { messages: Record<string, unknown>[] };
    (bad.messages[2] as Record<string, unknown>)['from_me'] = false; // a "bot" message from the client
    const problems = attendanceProblems(bad);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((x) => x.path.startsWith('$.messages[2]'))).toBe(true);
    expect(messagePattern({ from_me: false, from_bot: true, user: null })).toBeUndefined();
    expect(messagePattern({ from_me: true, from_bot: true, user: 3 })).toBeUndefined();
  });

  it('rejects a receptive payload with a campaign, and an active one without', () => {
    const p = buildAttendanceNotification(attendance(), seededRandom(1));
    expect(attendanceProblems({ ...p, from_me: false }).length).toBeGreaterThan(0);
    expect(attendanceProblems({ ...p, campaign_id: null }).length).toBeGreaterThan(0);
  });

  it('every built attendance validates (property)', () => {
    const arbSender = fc.oneof(
      fc.constantFrom<AttendanceSender>({ kind: 'campaign' }, { kind: 'client' }, { kind: 'bot' }),
      fc.integer().map((userId): AttendanceSender => ({ kind: 'attendant', userId })),
    );
    const arbMessage = fc.record({
      sender: arbSender,
      from: fc.string(),
      to: fc.string(),
      type: fc.constantFrom('text' as const, 'audio' as const, 'image' as const, 'video' as const, 'file' as const),
      text: fc.string(),
      file: fc.option(fc.webUrl(), { nil: null }),
      sentAt: fc.integer({ min: 0, max: 4e12 }),
    });
    fc.assert(
      fc.property(fc.array(arbMessage, { maxLength: 6 }), fc.boolean(), fc.option(fc.constantFrom(...SURVEY_STATUSES), { nil: null }), (messages, active, status) => {
        const p = buildAttendanceNotification(
          attendance({
            messages,
            origin: active ? { kind: 'active', campaignId: 1, requestId: 'r', costCenterId: 1 } : { kind: 'receptive' },
            survey: status === null ? null : survey(status),
            occurrence: { id: 1, name: 'Paid' },
            user: { id: 2, name: 'Ana' },
            data: { k: 'v' },
            document: '12345678900',
          }),
          seededRandom(1),
        );
        expect(attendanceProblems(JSON.parse(JSON.stringify(p)))).toEqual([]);
      }),
    );
  });
});
