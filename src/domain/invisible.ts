/**
 * Characters that change how text reads without showing themselves: the Arabic letter mark and the
 * other bidi controls, zero-width characters, line and paragraph separators, word joiners, the BOM.
 * As a regular expression character class body: response excerpts drop them (D32), the audit view
 * writes them out (D53), so one list serves both.
 */
export const INVISIBLE_FORMAT = "\\u061C\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2069\\uFEFF";
