/** A sending or receiving phone as the core takes it: digits only, country code included. */
export const PHONE_PATTERN = /^[0-9]{8,15}$/;

/** What {@link PHONE_PATTERN} accepts, in words, for error messages. */
export const PHONE_EXPECTED = 'a phone of 8 to 15 digits, country code included';
