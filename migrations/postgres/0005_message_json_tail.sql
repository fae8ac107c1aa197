-- Each message's JSON object from "sender" to its closing brace, byte for
-- byte as pages write it (MessageJSONTail), as migrations/0008 keeps it on
-- SQLite: a page reads a row's id and these bytes and copies them, instead
-- of reading eight more columns and escaping and formatting them again on
-- every read (docs/performance.md, "Stored JSON on PostgreSQL"). `bytea`
-- as every free-text column here (0003_text_bytes); the bytes never hold
-- a NUL (the encoder escapes every control character).
--
-- Written by the store in the same statement as every insert, edit and
-- delete of a message, from the same values (an append stored with a
-- later time than its instance's clock, PostgresBatch+CreationTime, gets
-- the bytes of that time by a second statement in its transaction). NULL,
-- and a page holding the row read whole, for a row written before this
-- migration until an instance fills it at start (PostgresStoredJSONFill),
-- and for a time no RFC 3339 year holds.
--
-- Adding a NULL column rewrites nothing: instant whatever the table holds.
-- Never edit this file once shipped: add 0006_*.sql instead.
ALTER TABLE messages ADD COLUMN json_tail bytea;

-- The rows without stored JSON, so the fill at start finds them without
-- reading the table: empty once filled, and a write with its bytes never
-- enters it.
CREATE INDEX messages_without_json_tail ON messages (conversation_seq, id) WHERE json_tail IS NULL;

-- Any UPDATE that changes what the JSON shows but not the stored bytes
-- (an instance of an older build still running during an upgrade, or a
-- hand-written statement) drops them, so the row is read whole from its
-- columns instead of showing bytes that are no longer true. The store's
-- own edits and deletes always write new bytes (the version in them
-- changes), so for them the WHEN clause is false and the function never
-- runs.
CREATE FUNCTION messages_drop_stale_json_tail() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.json_tail := NULL;
    RETURN NEW;
END
$$;

CREATE TRIGGER messages_json_tail_follows_columns
    BEFORE UPDATE ON messages
    FOR EACH ROW
    WHEN (NEW.json_tail IS NOT DISTINCT FROM OLD.json_tail
          AND (NEW.sender, NEW.body, NEW.created_at, NEW.edited_at, NEW.deleted, NEW.reply_to, NEW.client_id, NEW.version)
              IS DISTINCT FROM
              (OLD.sender, OLD.body, OLD.created_at, OLD.edited_at, OLD.deleted, OLD.reply_to, OLD.client_id, OLD.version))
    EXECUTE FUNCTION messages_drop_stale_json_tail();
