/**
 * The service contract (spec parts 2, 4, 5, 7, 8, 9): schemas, parsers that list every problem,
 * field rules, response bodies, mapping to the engine. Pure: no I/O, no clock, no randomness.
 */
export { API_KEY_HEADER, apiKeyMatcher, checkApiKey, constantTimeEqual } from './api-key.js';
export type { ApiKeyCheck, HeaderSource } from './api-key.js';
export { BusinessSchema, BusinessesResponseSchema, TemplateTypeSchema, TemplateVariableSchema } from './business-schema.js';
export type { Business, BusinessesResponse, TemplateType, TemplateVariable } from './business-schema.js';
export { parseBusinessesResponse } from './businesses.js';
export type { FieldCheck, ParseResult } from './check.js';
export { ConfigUpdateSchema, EMPTY_WEBHOOK_CONFIG, WEBHOOK_URL_KEYS, WebhookConfigSchema } from './config-schema.js';
export type { ConfigUpdate, WebhookConfig, WebhookUrlKey } from './config-schema.js';
export { isValidCnpj, isValidCpf, normaliseDocument } from './document.js';
export { FleetSchema } from './fleet-schema.js';
export type { DocumentKind } from './document.js';
export { isJsonContentType, parseJsonBody, utf8Length } from './json-body.js';
export { startJsonBody, startJsonBytes } from './json-slices.js';
export type { JsonBodySteps } from './json-slices.js';
export type { JsonBodyOptions, JsonBodyResult } from './json-body.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONTACTS, DEFAULT_MAX_SMS_ITEMS, MAX_REQUEST_RETRIES, MAX_RETRY_INTERVAL_MINUTES, MAX_SMS_MESSAGE_LENGTH, MAX_URL_LENGTH } from './limits.js';
export type { ContractLimits } from './limits.js';
export { toSmsSends, toSubmission } from './mapping.js';
export type { SmsSend } from './mapping.js';
export { buildOpenApiDocument } from './openapi.js';
export type { OpenApiOptions } from './openapi.js';
export { mergeConfig, parseConfig } from './parse-config.js';
export type { ConfigOptions } from './parse-config.js';
export { parseSendRequest, startSendRequest } from './parse-send-request.js';
export type { AcceptedContact, ParsedSendRequest, SendRequestOptions, SendRequestSteps, TemplateTypeLookup } from './parse-send-request.js';
export { parseSmsBatch } from './parse-sms-batch.js';
export type { AcceptedSms, ParsedSmsBatch, SmsBatchOptions } from './parse-sms-batch.js';
export { BRAZIL_AREA_CODES, normalisePhone } from './phone.js';
export { MAX_PROBLEMS_LISTED, problemTotal } from './problem-cap.js';
export { MAX_PROBLEMS_PER_REJECTION, REJECTION_REASONS } from './rejection.js';
export type { PhoneSet, Rejection, RejectionReason } from './rejection.js';
export { REPORT_STATUSES, REPORT_TYPES, ReportSchema } from './report-schema.js';
export type { Report, ReportStatus, ReportType } from './report-schema.js';
export {
  ERROR_CODES,
  ErrorBodySchema,
  MAX_PROBLEM_TEXT,
  MAX_REJECTIONS_IN_BODY,
  ProblemSchema,
  RejectionBodySchema,
  SendResponseSchema,
  SmsAcceptedBodySchema,
  SmsResponseSchema,
  SMS_REJECTION_REASONS,
} from './response-schemas.js';
export type { ErrorBody, ErrorCode, RejectionBody, SendResponse, SmsResponse } from './response-schemas.js';
export { ERROR_STATUS, MAX_PROBLEMS_IN_BODY, SUCCESS_STATUS, errorResponse, sendResponse, smsResponse } from './responses.js';
export type { HttpAnswer } from './responses.js';
export { ContactSchema, SendRequestSchema, createSendRequestSchema } from './send-request-schema.js';
export type { Contact, SendRequest } from './send-request-schema.js';
export { GSM7_CONCATENATED, GSM7_SINGLE, UCS2_CONCATENATED, UCS2_SINGLE, gsm7Septets, smsPartTexts, smsSize } from './sms-encoding.js';
export type { SmsEncoding, SmsSize } from './sms-encoding.js';
export { SmsBatchSchema, SmsItemSchema, createSmsBatchSchema } from './sms-schema.js';
export type { SmsBatch, SmsItem } from './sms-schema.js';
export { checkVariableCount, checkVariableValue, describeTemplate, describeTemplateType } from './template-fields.js';
export type { DescribeTemplateOptions, TemplateFields, TemplateTypeFields } from './template-fields.js';
export { checkUrl, classifyHost } from './url-policy.js';
export type { HostClass, UrlPolicy } from './url-policy.js';
