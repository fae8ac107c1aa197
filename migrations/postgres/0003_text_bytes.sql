-- The free text clients write is stored as its exact UTF-8 bytes: a
-- message's sender, body and client_id, a conversation's title. The
-- contract takes any valid UTF-8 there (MessageRules limits only lengths),
-- U+0000 included, and the SQLite store keeps it; PostgreSQL's `text`
-- cannot hold a NUL byte at all. `bytea` holds any bytes, and the store
-- only ever writes the UTF-8 of a Swift String into these columns and
-- reads them back as UTF-8, so the two stores answer byte for byte the
-- same. Ids and user ids (conversations.id, members.user_id,
-- removed_members.user_id) have restricted ASCII alphabets and stay text.
-- Never edit this file once shipped: add 0004_*.sql instead.
--
-- Comparisons keep their meaning: bytea compares byte by byte, as the
-- COLLATE "C" text it replaces would, so client_id's unique index
-- (rebuilt here on the new type) refuses the same duplicates, and the
-- unread scan compares `sender` to the user id's UTF-8 bytes (a bytea
-- parameter, no conversion per row).
--
-- Cost: each ALTER rewrites its table and rebuilds its indexes under an
-- ACCESS EXCLUSIVE lock: once, at the first start of the new code, in
-- time proportional to the stored messages, while the other instances
-- starting wait on the migrator's advisory lock and older instances still
-- running wait on the table locks (and then fail on the changed types:
-- upgrade every instance together).
ALTER TABLE messages
    ALTER COLUMN sender    TYPE bytea USING convert_to(sender, 'UTF8'),
    ALTER COLUMN body      TYPE bytea USING convert_to(body, 'UTF8'),
    ALTER COLUMN client_id TYPE bytea USING convert_to(client_id, 'UTF8');

ALTER TABLE conversations
    ALTER COLUMN title TYPE bytea USING convert_to(title, 'UTF8');
