/**
 * The fleet description: what a deployment sends with. One JSON document, read by the engine, the
 * command line and the server alike (DESIGN.md, "The fleet description").
 */

/** A sending number is either in the pools or out of them. */
export type NumberStatus = 'active' | 'paused';
/** Templates can also be disabled by the platform: out until someone enables them again. */
export type TemplateStatus = 'active' | 'paused' | 'disabled';

/** One sending number of a business (spec 1.3, 8.1, 8.2). */
export interface NumberDescription {
  /** Digits including the country code, 8 to 15 of them (E.164 without `+`). Unique in the fleet. */
  readonly phone: string;
  /** Messages per hour the number may send (a token bucket refilling continuously); 1 to 1,000,000,000. */
  readonly throughputPerHour: number;
  /** Messages the number may send in any rolling 24 hours (the channel's messaging limit). */
  readonly messagingLimit24h: number;
  /** Optional per-second rate (the channel's throughput, e.g. 80/s), enforced with the other windows. */
  readonly messagesPerSecond?: number;
  /** @default 'active' */
  readonly status?: NumberStatus;
  /** With `status: 'paused'`: clock time (ms, or an ISO 8601 string) at which the pause ends by itself. */
  readonly pausedUntil?: number | string;
  /** Account the number belongs to; a template with an account is sent only from numbers of that account. */
  readonly account?: string;
  /** What the WhatsApp Cloud API channel needs of the number (other channels ignore it). */
  readonly whatsapp?: WhatsAppNumberIds;
  /**
   * Portfolio (`portfolios[].id`) whose messaging limit the number shares, when it is not its
   * business's (a business spread over portfolios). @default the business's `portfolioId`, if any
   */
  readonly portfolioId?: string;
  /** Free annotations of the host; sendpool does not read them. */
  readonly meta?: unknown;
}

/** Provider ids of a number on the WhatsApp Cloud API. */
export interface WhatsAppNumberIds {
  /** The phone-number id of the Graph API (`POST /{version}/{phoneNumberId}/messages`): digits, unique in the fleet. */
  readonly phoneNumberId: string;
  /** WhatsApp Business Account (WABA) of the number. @default the business's `whatsapp.wabaId` */
  readonly wabaId?: string;
}

/** Provider ids of a template on the WhatsApp Cloud API. */
export interface WhatsAppTemplateIds {
  /** The template's name as approved on the platform (lowercase letters, digits, `_`). @default the template's `name` */
  readonly name?: string;
  /** Language and locale code the template was approved in, e.g. `pt_BR`, `en_US`, `es`. */
  readonly language: string;
  /** The platform's template id (`message_template_id` of its status webhooks); matches status changes exactly. */
  readonly id?: string;
  /** WABA the template belongs to. @default the `whatsapp.wabaId` of its businesses */
  readonly wabaId?: string;
  /**
   * What the approved template takes at send time, and which of the contact's `template_variables`
   * (zero-based, spec 2.3) fill it: a header, the body's parameters, the buttons' parameters.
   * @default every value is a text parameter of the body, in order (a template of body text only)
   */
  readonly components?: WhatsAppTemplateComponents;
}

/**
 * The parameters of a template's components (Meta's "Send message templates"). Each value comes from
 * the contact: `variable` is a zero-based index into its `template_variables`, below the count of
 * the template text's placeholders. A value may fill several parameters (an OTP fills the body
 * and the copy-code button); a value no parameter takes is not sent.
 */
export interface WhatsAppTemplateComponents {
  /** The header's parameter, when the approved header has one (a text header with a parameter, or a media header). */
  readonly header?: WhatsAppHeader;
  /**
   * The body's text parameters, in the order of the body's placeholders.
   * @default the values no header or button takes, in order
   */
  readonly body?: readonly WhatsAppBodyParameter[];
  /** The parameters of the buttons that take one (dynamic URL, quick reply payload, copy code, OTP), by button index. */
  readonly buttons?: readonly WhatsAppButton[];
}

/** A text header's parameter, or a media header's image, video or document. */
export type WhatsAppHeader = WhatsAppTextHeader | WhatsAppMediaHeader;

/** A text header with one parameter: `{{1}}`, or a named one (`parameterName`) in a template of named parameters. */
export interface WhatsAppTextHeader {
  readonly type: 'text';
  /** The contact's value that fills it (zero-based index into `template_variables`). */
  readonly variable: number;
  /** Meta's `parameter_name`, for a template created with named parameters (`{{first_name}}`). */
  readonly parameterName?: string;
}

/** A media header: exactly one of `link`, `id` or `variable` says where the media is. */
export interface WhatsAppMediaHeader {
  readonly type: 'image' | 'video' | 'document';
  /** An http(s) URL of the media, the same for every contact. */
  readonly link?: string;
  /** The id of media uploaded to the platform (`POST /{phone-number-id}/media`), the same for every contact. */
  readonly id?: string;
  /** The contact's value that is the media's http(s) URL (zero-based index into `template_variables`). */
  readonly variable?: number;
  /** A document's file name as the recipient sees it (documents only). */
  readonly filename?: string;
}

/** One text parameter of the body. */
export interface WhatsAppBodyParameter {
  /** The contact's value that fills it (zero-based index into `template_variables`). */
  readonly variable: number;
  /** Meta's `parameter_name`, for a template created with named parameters: on every text parameter or on none. */
  readonly parameterName?: string;
}

/** The parameter of one button, by its zero-based `index` among the template's buttons. */
export type WhatsAppButton =
  | {
      /** A URL button whose URL ends with a parameter: the contact's value is appended to the approved URL. */
      readonly type: 'url';
      readonly index: number;
      readonly variable: number;
    }
  | {
      /** A quick reply button: the payload returned in the reply webhook, fixed or the contact's value. */
      readonly type: 'quick_reply';
      readonly index: number;
      readonly payload?: string;
      readonly variable?: number;
    }
  | {
      /** A copy code (coupon) button: the code, fixed (`couponCode`) or the contact's value. */
      readonly type: 'copy_code';
      readonly index: number;
      readonly couponCode?: string;
      readonly variable?: number;
    }
  | {
      /** The copy code button of an authentication template (one-time password): sent as Meta documents it, a `url` button with the code. */
      readonly type: 'otp';
      readonly index: number;
      readonly variable: number;
    };

/** A template type: a functional category linking templates of one business (spec 1.4). */
export interface TemplateTypeDescription {
  readonly id: number;
  readonly name: string;
  /** Templates of the type; each must be associated with the type's business. */
  readonly templateIds: readonly number[];
  readonly meta?: unknown;
}

/** A business manager (BM): numbers and template types (spec 1.2). */
export interface BusinessDescription {
  readonly id: number;
  readonly name: string;
  /** Company (tenant) the business belongs to; used by the server's API keys. */
  readonly companyId?: number;
  readonly numbers: readonly NumberDescription[];
  readonly templateTypes: readonly TemplateTypeDescription[];
  /** The business's WhatsApp Business Account, the default of its numbers and templates. */
  readonly whatsapp?: { readonly wabaId: string };
  /**
   * Portfolio (`portfolios[].id`) whose messaging limit the business's numbers share. @default none:
   * each number is held by its own windows only
   */
  readonly portfolioId?: string;
  readonly meta?: unknown;
}

/**
 * A business portfolio: a messaging limit shared by every number that names it, on top of each
 * number's own windows. WhatsApp counts it so since October 2025: the limit belongs to the
 * portfolio, counts unique recipients in a moving 24 hours, and every number of the portfolio
 * draws on it (docs/concepts.md, "Portfolio limits").
 */
export interface PortfolioDescription {
  /** Id the businesses and numbers name in `portfolioId` (e.g. Meta's business portfolio id). Unique in the fleet. */
  readonly id: string;
  /** Recipients (or, without `uniqueRecipients`, messages) the portfolio's numbers may reach together in any moving 24 hours; 1 to 1,000,000,000,000. */
  readonly messagingLimit24h: number;
  /**
   * Whether the limit counts distinct recipients (a message to a recipient reached in the last
   * 24 hours costs nothing) or every message. @default true
   */
  readonly uniqueRecipients?: boolean;
  readonly meta?: unknown;
}

/** One placeholder's name: `index` is zero-based into the contact's `template_variables` (spec 2.2). */
export interface TemplateVariable {
  readonly name: string;
  readonly index: number;
}

/** An approved message template (spec 1.2, 2.2). */
export interface TemplateDescription {
  readonly id: number;
  readonly name: string;
  /** Text with positional placeholders `{{1}}`, `{{2}}`, …; all templates of a type take the same count. */
  readonly text: string;
  /** Businesses the template is associated with (a template may serve several). */
  readonly businessIds: readonly number[];
  /** @default 'active' */
  readonly status?: TemplateStatus;
  /** With `status: 'paused'`: clock time (ms, or an ISO 8601 string) at which the pause ends by itself. */
  readonly pausedUntil?: number | string;
  /** Account the template belongs to; sent only from numbers of the same account (or without one). */
  readonly account?: string;
  /** The text with sample values filled in (spec 2.2 `example`). */
  readonly example?: string;
  /** Names of the placeholders (spec 2.2 `variables`). */
  readonly variables?: readonly TemplateVariable[];
  /** What the WhatsApp Cloud API channel needs of the template (other channels ignore it). */
  readonly whatsapp?: WhatsAppTemplateIds;
  readonly meta?: unknown;
}

/** The whole fleet. */
export interface FleetDescription {
  readonly businesses: readonly BusinessDescription[];
  readonly templates: readonly TemplateDescription[];
  /** Portfolios whose messaging limits numbers share (`portfolioId` of a business or number). @default none */
  readonly portfolios?: readonly PortfolioDescription[];
  readonly meta?: unknown;
}

/** Largest hourly rate: keeps the limit arithmetic exact in doubles (rate x 3,600,000 < 2^53). */
export const MAX_THROUGHPUT_PER_HOUR = 1_000_000_000;
/** Largest per-second rate. */
export const MAX_MESSAGES_PER_SECOND = 1_000_000;
/** Largest 24 h messaging limit (the channel's "unlimited" tier is written as this). */
export const MAX_MESSAGING_LIMIT_24H = 1_000_000_000_000;
