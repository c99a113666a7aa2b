export { Nullable, EventIdSchema, DateTimeSchema, ContactDataSchema } from './common.js';
