-- The first schema of the chat history store.
-- Never edit this file once shipped: add 0002_*.sql instead (the store keeps
-- a checksum of every applied file and refuses a database whose files changed).

-- One row per conversation, with the counters the writer keeps in the same
-- transaction as every change, so reading a conversation is one row.
CREATE TABLE conversations (
    -- A compact integer key: messages are clustered by it (see below).
    seq           INTEGER PRIMARY KEY,
    -- The public id, 1 to 64 characters of [A-Za-z0-9_-].
    id            TEXT    NOT NULL UNIQUE,
    title         TEXT,
    -- Milliseconds since the Unix epoch, UTC.
    created_at    INTEGER NOT NULL,
    -- Every message ever appended, tombstones included.
    message_count INTEGER NOT NULL DEFAULT 0,
    oldest_id     INTEGER,
    newest_id     INTEGER,
    -- The change counter: +1 for every append, edit and delete.
    version       INTEGER NOT NULL DEFAULT 0
);

-- Messages are keyed by (conversation, id) in a WITHOUT ROWID table, so a
-- conversation's rows sit together in the B-tree: a page is one seek and a
-- short forward scan whatever the depth, and a short conversation's page
-- does not touch pages scattered by the global id order.
CREATE TABLE messages (
    conversation_seq INTEGER NOT NULL REFERENCES conversations(seq),
    -- Unique across the server, allocated by the single writer in commit order.
    id               INTEGER NOT NULL,
    sender           TEXT    NOT NULL,
    -- Empty for a tombstone: deleting erases the content.
    body             TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    edited_at        INTEGER,
    deleted          INTEGER NOT NULL DEFAULT 0,
    reply_to         INTEGER,
    client_id        TEXT,
    -- A fingerprint of the sender and body first posted with client_id, so a
    -- retry is recognised even after the message was edited or deleted.
    client_fingerprint INTEGER,
    -- The conversation's version when the message was appended: an event is
    -- `created` when this is after the `since` asked about.
    created_version  INTEGER NOT NULL,
    -- The conversation's version at the message's last change.
    version          INTEGER NOT NULL,
    PRIMARY KEY (conversation_seq, id)
) WITHOUT ROWID;

-- Ids are unique across the server; this also finds the next id at start-up.
CREATE UNIQUE INDEX messages_by_id ON messages (id);

-- The compacted change feed: the messages changed after a version, in the
-- order of their last change, is a range read on this index.
CREATE UNIQUE INDEX messages_by_version ON messages (conversation_seq, version);

-- Idempotent appends: a client_id is used once per conversation, ever.
CREATE UNIQUE INDEX messages_by_client_id ON messages (conversation_seq, client_id)
    WHERE client_id IS NOT NULL;
