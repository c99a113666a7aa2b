/**
 * The attendance notification (spec 6.2) as the server fills it: from the channel's report of a
 * closed attendance and the campaign message whose reply opened it (its contact, campaign and
 * sender number), each message's sender, direction and text, and the survey's ending.
 *
 * Separate from the notifier, which decides whether and where the notification goes: this is the
 * mapping from the channel's words (channel.ts, `AttendanceReport`) to the contract's.
 */
import type { AttendanceInput, AttendanceMessageInput, SurveyInput } from '../events/attendance.js';
import type { AttendanceReport } from './ports/channel.js';
import type { TrackedMessage } from './tracked-messages.js';

/** The input of `buildAttendanceNotification` for attendance `r`, opened by a reply to `t`. */
export function attendanceInput(r: AttendanceReport, t: TrackedMessage): AttendanceInput {
  const contact = t.contact;
  const messages: AttendanceMessageInput[] = r.messages.map((m) => {
    const fromClient = m.sender === 'client';
    return {
      sender: typeof m.sender === 'object' ? { kind: 'attendant', userId: m.sender.attendantId } : { kind: m.sender },
      from: fromClient ? contact.phone : t.from,
      to: fromClient ? t.from : contact.phone,
      type: m.type,
      // A channel that does not keep what it sent leaves the campaign's message empty: it is the text sent.
      text: m.sender === 'campaign' && m.text === '' ? t.text : m.text,
      file: m.file ?? null,
      sentAt: m.at,
    };
  });
  const s = r.survey;
  const survey: SurveyInput | null = !s
    ? null
    : s.status === 'completed'
      ? { id: s.id, name: s.name, startedAt: s.startedAt, answers: s.answers, status: 'completed', completedAt: s.endedAt ?? r.closedAt }
      : s.status === 'expired'
        ? { id: s.id, name: s.name, startedAt: s.startedAt, answers: s.answers, status: 'expired', expiredAt: s.endedAt ?? r.closedAt }
        : { id: s.id, name: s.name, startedAt: s.startedAt, answers: s.answers, status: s.status };
  return {
    id: r.attendanceId,
    ticketId: r.ticketId,
    ticketUuid: r.ticketUuid,
    origin: { kind: 'active', campaignId: t.campaignId, requestId: contact.requestId, costCenterId: contact.costCenterId },
    number: contact.phone,
    data: contact.data ?? null,
    document: contact.document ?? null,
    occurrence: r.occurrence ?? null,
    user: r.user ?? null,
    closedAt: r.closedAt,
    messages,
    survey,
  };
}
