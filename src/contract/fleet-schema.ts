/**
 * The fleet description (DESIGN.md, "The fleet description"; `FleetDescription` of `sendpool`) as a
 * JSON Schema, so an editor checks a fleet file as it is written. The package ships it as
 * `docs/fleet.schema.json` (`npm run fleet-schema` writes it; a test fails when it is stale).
 *
 * `validateFleet` of the core stays the authority (the core keeps no TypeBox): the schema refuses
 * nothing it accepts, and refuses what it refuses field by field — types, ranges, unknown keys,
 * required fields, phone and id patterns, statuses, the template text's placeholder grammar, a
 * pause end without `status: "paused"`. What depends on other parts of the document is the
 * validator's alone: unique ids and phones, references to businesses and templates, the same
 * placeholder count across a type, contiguous placeholders, `variables` indexes within the text's
 * placeholders and named once, WhatsApp component variables within the text's placeholders, button
 * indexes used once, named and positional parameters not mixed, and pause ends that are not real dates. A property test
 * (test/contract/fleet-schema.test.ts) holds the two together; the patterns below copy those of
 * src/core/fleet-validate.ts and that test is what keeps them equal.
 */
import { Type } from '@sinclair/typebox';
import { MAX_MESSAGES_PER_SECOND, MAX_MESSAGING_LIMIT_24H, MAX_THROUGHPUT_PER_HOUR } from '../core/fleet.js';
import { COUPON_CODE, MAX_TEMPLATE_BUTTONS, MEDIA_LINK, PARAMETER_NAME } from '../core/fleet-whatsapp-components.js';
import { MAX_PLACEHOLDERS } from '../core/template-text.js';

const id = (description = 'a positive integer id') => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
const Id = id();
const NonEmpty = (description?: string) => Type.String({ minLength: 1, ...(description ? { description } : {}) });
/** Free annotations of the host; sendpool does not read them. */
const Meta = Type.Optional(Type.Unknown({ description: 'free annotations of the host; sendpool does not read them' }));
/** Ids of the Graph API (phone-number, WABA, template ids): digits, written as strings. */
const GraphId = Type.String({ pattern: '^[0-9]{1,32}$', description: 'a Graph API id: a string of 1 to 32 digits' });
const TEMPLATE_NAME_PATTERN = '^[a-z0-9_]{1,512}$';

/** A placeholder `{{1}}`..`{{100}}`, written without spaces or leading zeros. */
const PLACEHOLDER = `\\{\\{(?:[1-9][0-9]?|${MAX_PLACEHOLDERS})\\}\\}`;
/**
 * A template text: every `{{` opens a placeholder and every `}}` closes one. Single braces are
 * text, but not one that would make a double brace with a placeholder beside it (`{{{1}}`, `{{1}}}`).
 */
const TEMPLATE_TEXT = `^(?:[^{}]|\\{(?!\\{)|\\}(?!\\})|${PLACEHOLDER}(?!\\}))+$`;

/** A pause end: milliseconds, or an ISO 8601 date-time with an offset. */
const ClockTime = Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T.*(Z|[+-]\\d{2}:\\d{2})$' })], {
  description: 'with status "paused": when the pause ends by itself, in milliseconds or as an ISO 8601 date-time with offset',
});

/** `pausedUntil` only with `status: "paused"` (the default status is active). */
const PauseNeedsPausedStatus = Type.Union([Type.Not(Type.Object({ pausedUntil: Type.Unknown() })), Type.Object({ status: Type.Literal('paused') })]);

const closed = (title: string, description: string) => ({ title, description, additionalProperties: false });

/** A contact's value: zero-based index into its `template_variables`, below the text's placeholder count (the validator checks that bound). */
const Variable = Type.Integer({
  minimum: 0,
  maximum: MAX_PLACEHOLDERS - 1,
  description: "the contact's value: a zero-based index into its template_variables (below the template text's placeholder count)",
});
const ParameterName = Type.String({ pattern: PARAMETER_NAME.source, description: "Meta's parameter_name, for a template created with named parameters" });
const ButtonIndex = Type.Integer({ minimum: 0, maximum: MAX_TEMPLATE_BUTTONS - 1, description: "the button's zero-based index among the template's buttons" });

/** A media header: exactly one of link, id, variable (each branch is closed, so two of them match none). */
const mediaHeader = (type: 'image' | 'video' | 'document') => {
  const base = { type: Type.Literal(type), ...(type === 'document' ? { filename: Type.Optional(NonEmpty("the document's file name")) } : {}) };
  return [
    Type.Object({ ...base, link: Type.String({ pattern: MEDIA_LINK.source, description: 'an http(s) URL of the media, the same for every contact' }) }, { additionalProperties: false }),
    Type.Object({ ...base, id: Type.String({ pattern: '^[0-9]{1,32}$', description: 'the id of media uploaded to the platform' }) }, { additionalProperties: false }),
    Type.Object({ ...base, variable: Variable }, { additionalProperties: false }),
  ];
};

const HeaderSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('text'), variable: Variable, parameterName: Type.Optional(ParameterName) }, { additionalProperties: false }),
    ...mediaHeader('image'),
    ...mediaHeader('video'),
    ...mediaHeader('document'),
  ],
  { title: 'WhatsAppHeader', description: "a text header's parameter, or a media header's image, video or document (exactly one of link, id, variable)" },
);

const button = <T extends string>(type: T, source: Record<string, ReturnType<typeof Type.String> | typeof Variable>) =>
  Type.Object({ type: Type.Literal(type), index: ButtonIndex, ...source }, { additionalProperties: false });

const ButtonSchema = Type.Union(
  [
    button('url', { variable: Variable }),
    button('quick_reply', { payload: NonEmpty('the payload the reply webhook carries') }),
    button('quick_reply', { variable: Variable }),
    button('copy_code', { couponCode: Type.String({ pattern: COUPON_CODE.source, description: 'a coupon code: letters and digits' }) }),
    button('copy_code', { variable: Variable }),
    button('otp', { variable: Variable }),
  ],
  { title: 'WhatsAppButton', description: 'the parameter of one button: a URL suffix, a quick reply payload, a copy code, a one-time password' },
);

const ComponentsSchema = Type.Object(
  {
    header: Type.Optional(HeaderSchema),
    body: Type.Optional(
      Type.Array(Type.Object({ variable: Variable, parameterName: Type.Optional(ParameterName) }, closed('WhatsAppBodyParameter', 'one text parameter of the body')), {
        description: "the body's text parameters in placeholder order; default: the values no header or button takes",
      }),
    ),
    buttons: Type.Optional(Type.Array(ButtonSchema, { maxItems: MAX_TEMPLATE_BUTTONS, description: 'the parameters of the buttons that take one, by button index (each index once)' })),
  },
  closed('WhatsAppTemplateComponents', "what the approved template takes at send time, and which of the contact's values fill it"),
);

const NumberSchema = Type.Intersect(
  [
    Type.Object(
      {
        phone: Type.String({ pattern: '^[0-9]{8,15}$', description: 'digits including the country code, 8 to 15 of them (E.164 without +); unique in the fleet' }),
        throughputPerHour: Type.Integer({ minimum: 1, maximum: MAX_THROUGHPUT_PER_HOUR, description: 'messages per hour the number may send' }),
        messagingLimit24h: Type.Integer({ minimum: 1, maximum: MAX_MESSAGING_LIMIT_24H, description: 'messages the number may send in any rolling 24 hours' }),
        messagesPerSecond: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MESSAGES_PER_SECOND, description: 'per-second rate, enforced with the other windows' })),
        status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { default: 'active' })),
        pausedUntil: Type.Optional(ClockTime),
        account: Type.Optional(NonEmpty('account the number belongs to; a template with an account is sent only from numbers of that account')),
        whatsapp: Type.Optional(
          Type.Object(
            {
              phoneNumberId: GraphId,
              wabaId: Type.Optional(GraphId),
            },
            closed('WhatsAppNumberIds', 'provider ids of the number on the WhatsApp Cloud API'),
          ),
        ),
        portfolioId: Type.Optional(NonEmpty("portfolio (portfolios[].id) whose messaging limit the number shares; default: its business's")),
        meta: Meta,
      },
      closed('NumberDescription', 'one sending number of a business'),
    ),
    PauseNeedsPausedStatus,
  ],
  { title: 'NumberDescription' },
);

const TemplateTypeSchema = Type.Object(
  {
    id: Id,
    name: NonEmpty(),
    templateIds: Type.Array(Id, { uniqueItems: true, description: "templates of the type, each associated with the type's business" }),
    meta: Meta,
  },
  closed('TemplateTypeDescription', 'a template type: a category linking templates of one business'),
);

const BusinessSchema = Type.Object(
  {
    id: Id,
    name: NonEmpty(),
    companyId: Type.Optional(id("company (tenant) the business belongs to; used by the server's API keys")),
    numbers: Type.Array(NumberSchema),
    templateTypes: Type.Array(TemplateTypeSchema),
    whatsapp: Type.Optional(Type.Object({ wabaId: GraphId }, closed('BusinessWhatsApp', "the business's WhatsApp Business Account, the default of its numbers and templates"))),
    portfolioId: Type.Optional(NonEmpty("portfolio (portfolios[].id) whose messaging limit the business's numbers share")),
    meta: Meta,
  },
  closed('BusinessDescription', 'a business manager (BM): numbers and template types'),
);

/** Without `whatsapp.name`, the template's own name stands in, so it must be a platform name. */
const PlatformNameWhenNoneGiven = Type.Union([
  Type.Not(Type.Object({ whatsapp: Type.Not(Type.Object({ name: Type.Unknown() })) })),
  Type.Object({ name: Type.String({ pattern: TEMPLATE_NAME_PATTERN }) }),
]);

const TemplateSchema = Type.Intersect(
  [
    Type.Object(
      {
        id: Id,
        name: NonEmpty(),
        text: Type.String({
          pattern: TEMPLATE_TEXT,
          description: `text with placeholders {{1}}, {{2}}, … up to {{${MAX_PLACEHOLDERS}}}, contiguous from {{1}}; every template of a type takes the same count`,
        }),
        businessIds: Type.Array(Id, { uniqueItems: true, description: 'businesses the template is associated with' }),
        status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('disabled')], { default: 'active' })),
        pausedUntil: Type.Optional(ClockTime),
        account: Type.Optional(NonEmpty('account the template belongs to; sent only from numbers of the same account (or without one)')),
        example: Type.Optional(
          Type.String({
            pattern: '^(?![\\s\\S]*\\{\\{\\s*\\d+\\s*\\}\\})[\\s\\S]+$',
            description: 'the text with sample values in place of its {{k}} placeholders (spec 2.2)',
          }),
        ),
        variables: Type.Optional(
          Type.Array(
            Type.Object(
              {
                name: NonEmpty(),
                index: Type.Integer({ minimum: 0, maximum: MAX_PLACEHOLDERS - 1, description: 'zero-based placeholder index: {{k}} is k - 1' }),
              },
              closed('TemplateVariable', 'the name of one placeholder (spec 2.2)'),
            ),
          ),
        ),
        whatsapp: Type.Optional(
          Type.Object(
            {
              name: Type.Optional(Type.String({ pattern: TEMPLATE_NAME_PATTERN, description: "the template's name on the platform; default: the template's name" })),
              language: Type.String({ pattern: '^[a-z]{2,3}(?:_[A-Za-z]{2,4})?$', description: 'language and locale code, e.g. "pt_BR", "en_US", "es"' }),
              id: Type.Optional(GraphId),
              wabaId: Type.Optional(GraphId),
              components: Type.Optional(ComponentsSchema),
            },
            closed('WhatsAppTemplateIds', 'provider ids of the template on the WhatsApp Cloud API'),
          ),
        ),
        meta: Meta,
      },
      closed('TemplateDescription', 'an approved message template'),
    ),
    PauseNeedsPausedStatus,
    PlatformNameWhenNoneGiven,
  ],
  { title: 'TemplateDescription' },
);

const PortfolioSchema = Type.Object(
  {
    id: NonEmpty('id the businesses and numbers name in portfolioId; unique in the fleet'),
    messagingLimit24h: Type.Integer({
      minimum: 1,
      maximum: MAX_MESSAGING_LIMIT_24H,
      description: "recipients (or, without uniqueRecipients, messages) the portfolio's numbers may reach together in any moving 24 hours",
    }),
    uniqueRecipients: Type.Optional(Type.Boolean({ default: true, description: 'whether the limit counts distinct recipients (true) or every message' })),
    meta: Meta,
  },
  closed('PortfolioDescription', 'a business portfolio: a messaging limit shared by the numbers that name it'),
);

/**
 * JSON Schema of a fleet file (draft-07; `JSON.stringify` gives the document). Point an editor at it
 * with `"$schema"` in the file, e.g. `"./node_modules/sendpool/docs/fleet.schema.json"`;
 * `validateFleet` ignores that key.
 */
export const FleetSchema = Type.Object(
  {
    $schema: Type.Optional(Type.Unknown({ description: 'where an editor finds this schema; sendpool ignores it' })),
    businesses: Type.Array(BusinessSchema),
    templates: Type.Array(TemplateSchema),
    portfolios: Type.Optional(Type.Array(PortfolioSchema, { description: 'portfolios whose messaging limits numbers share (portfolioId of a business or number)' })),
    meta: Meta,
  },
  {
    // Draft-07: the version editors support best; every keyword used here is in it.
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'sendpool fleet description',
    description:
      'What a deployment sends with: businesses with their numbers and template types, and the templates. validateFleet also checks what spans the document: unique ids and phones, known references, one placeholder count per type.',
    additionalProperties: false,
  },
);
