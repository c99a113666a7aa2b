/** fast-check generators of valid fleet descriptions, shared by the core's property tests. */
import fc from 'fast-check';
import type { FleetDescription } from '../../src/index.js';

export interface FleetShape {
  readonly fleet: FleetDescription;
  /** Every (business, type) of the fleet. */
  readonly pools: readonly { readonly businessId: number; readonly typeId: number }[];
  readonly phones: readonly string[];
  readonly templateIds: readonly number[];
}

export interface FleetArbOptions {
  readonly maxBusinesses?: number;
  readonly maxNumbers?: number;
  /** Give numbers and templates accounts (partial compatibility). */
  readonly accounts?: boolean;
  /** Give some numbers a per-second window. */
  readonly perSecond?: boolean;
  readonly maxRate?: number;
  readonly maxLimit24h?: number;
}

const numberArb = (opts: FleetArbOptions) =>
  fc.record({
    throughputPerHour: fc.integer({ min: 1, max: opts.maxRate ?? 5_000 }),
    messagingLimit24h: fc.integer({ min: 1, max: opts.maxLimit24h ?? 50_000 }),
    messagesPerSecond: opts.perSecond ? fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) : fc.constant(undefined),
    paused: fc.boolean(),
    account: opts.accounts ? fc.option(fc.constantFrom('A', 'B'), { nil: undefined }) : fc.constant(undefined),
  });

const typeArb = fc.record({ templates: fc.integer({ min: 1, max: 3 }), placeholders: fc.integer({ min: 0, max: 2 }) });

export function fleetArb(opts: FleetArbOptions = {}): fc.Arbitrary<FleetShape> {
  return fc
    .array(
      fc.record({
        numbers: fc.array(numberArb(opts), { minLength: 1, maxLength: opts.maxNumbers ?? 6 }),
        types: fc.array(typeArb, { minLength: 1, maxLength: 3 }),
        templateStatuses: fc.array(fc.constantFrom('active', 'active', 'active', 'paused', 'disabled'), { minLength: 9, maxLength: 9 }),
        templateAccounts: fc.array(opts.accounts ? fc.option(fc.constantFrom('A', 'B'), { nil: undefined }) : fc.constant(undefined), {
          minLength: 9,
          maxLength: 9,
        }),
      }),
      { minLength: 1, maxLength: opts.maxBusinesses ?? 3 },
    )
    .map((bs) => {
      let phone = 5511900000000;
      let templateId = 100;
      const templates: FleetDescription['templates'][number][] = [];
      const pools: { businessId: number; typeId: number }[] = [];
      const phones: string[] = [];
      const businesses = bs.map((b, bi) => {
        const businessId = bi + 1;
        let k = 0;
        const templateTypes = b.types.map((t, ti) => {
          const ids: number[] = [];
          for (let j = 0; j < t.templates; j++) {
            const id = templateId++;
            ids.push(id);
            const text = ['Hello', ...Array.from({ length: t.placeholders }, (_, p) => `{{${p + 1}}}`)].join(' ');
            const status = b.templateStatuses[k % 9]!;
            const account = b.templateAccounts[k % 9];
            k++;
            templates.push({ id, name: `t${id}`, text, businessIds: [businessId], status: status, ...(account ? { account } : {}) });
          }
          pools.push({ businessId, typeId: ti + 1 });
          return { id: ti + 1, name: `type${ti + 1}`, templateIds: ids };
        });
        const numbers = b.numbers.map((n) => {
          const p = String(phone++);
          phones.push(p);
          return {
            phone: p,
            throughputPerHour: n.throughputPerHour,
            messagingLimit24h: n.messagingLimit24h,
            ...(n.messagesPerSecond !== undefined ? { messagesPerSecond: n.messagesPerSecond } : {}),
            status: n.paused ? ('paused' as const) : ('active' as const),
            ...(n.account ? { account: n.account } : {}),
          };
        });
        return { id: businessId, name: `bm${businessId}`, numbers, templateTypes };
      });
      return { fleet: { businesses, templates }, pools, phones, templateIds: templates.map((t) => t.id) };
    });
}

/** Three numbers of 1,000 messages/hour, one type of two templates: the spec's illustration. */
export function specFleet(): FleetDescription {
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        numbers: [1, 2, 3].map((i) => ({ phone: `551199000000${i}`, throughputPerHour: 1000, messagingLimit24h: 10000, status: 'active' as const })),
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101] }],
      },
    ],
    templates: [
      { id: 100, name: 'billing_a', text: 'Hi {{1}}, your bill of {{2}} is due.', businessIds: [1], status: 'active' },
      { id: 101, name: 'billing_b', text: '{{1}}, {{2}} is due tomorrow.', businessIds: [1], status: 'active' },
    ],
  };
}
