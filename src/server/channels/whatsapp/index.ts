/**
 * `sendpool/whatsapp`: the WhatsApp Cloud API channel behind the server's `Channel` port. Its own
 * entry, free of fastify: a host that serves HTTP with another framework mounts the channel's
 * `inbound` routes itself (each takes the raw body and answers status and text). Needs the optional
 * package `undici`. docs/channels.md describes it.
 */
export { createWhatsAppChannel, type WhatsAppChannel, type WhatsAppChannelStats } from './channel.js';
export { DEFAULT_OPT_OUT_KEYWORDS, WhatsAppChannelError, isWhatsAppChannelError, type WhatsAppChannelOptions } from './options.js';
export { signatureOf, verifySignature } from './signature.js';
export { DEFAULT_MESSAGES_PER_SECOND, TIER_LIMITS, UPGRADED_MESSAGES_PER_SECOND } from './platform-changes.js';
export { templateMessageBody, templatePart, type TemplateForPart, type TemplatePart } from './request.js';
