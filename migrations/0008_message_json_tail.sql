-- Each message's JSON object from "sender" to its closing brace, byte for
-- byte as pages write it (MessageJSONTail): a page copies it after writing
-- the id and the conversation's id itself, instead of decoding the row's
-- columns and escaping them again on every read (docs/performance.md,
-- "Stored JSON"). Written by the writer in the same statement as every
-- insert, edit and delete of a message, from the same values (not a
-- generated column: SQLite's JSON functions are not allowed in the schema
-- of a connection that does not trust it, and their escapes are other
-- bytes than the API's). NULL for rows written before this migration until
-- the store fills them at open (SQLiteStoredJSONFill), and for a time no
-- RFC 3339 year holds; a page reads such a row whole.
-- Never edit this file once shipped: add 0009_*.sql instead.
ALTER TABLE messages ADD COLUMN json_tail TEXT;

-- The rows without a tail, so the fill at open finds them without reading
-- the table: empty once filled, and a write with its tail never enters it.
CREATE INDEX messages_without_json_tail ON messages (place) WHERE json_tail IS NULL;
