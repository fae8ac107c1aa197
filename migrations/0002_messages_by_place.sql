-- Messages move from the WITHOUT ROWID table keyed by (conversation_seq, id)
-- to a rowid table keyed by one integer, `place`: the conversation's seq in
-- the high bits and the message id in the low 36. A conversation's messages
-- stay one contiguous run of the B-tree, in id order, as before.
--
-- Why: in a WITHOUT ROWID table every interior cell holds a whole row, so at
-- two million messages of about 120 bytes an 8 KiB interior page held 56
-- cells, the tree was four levels deep and its 601 interior pages (4.7 MiB)
-- did not stay in the CPU caches: a page read far from the last one paid
-- cold binary searches on two interior levels. A rowid table's interior
-- cells hold only the key (565 a page: 55 interior pages, three levels), so
-- a deep page pays one cold leaf. Measured with history-store-bench on 1M
-- messages (see README): deep pages 1.22x -> about 1.1x the newest page.
--
-- Limits of the layout: message ids up to 2^36 - 1 (68.7 billion) and
-- conversation seqs up to 2^27 - 2 (134 million); the writer refuses more
-- with a storage-full error. conversation_seq and id are generated from
-- place, so they take no room and can never disagree with it.

-- A database with an id or seq the layout cannot hold is refused here,
-- before anything is copied (the migration then rolls back whole).
CREATE TEMP TABLE layout_fits (
    messages_out_of_range INTEGER CONSTRAINT ids_below_2_36_and_seqs_below_2_27 CHECK (messages_out_of_range = 0)
);
INSERT INTO layout_fits
    SELECT count(*) FROM messages WHERE id > 68719476735 OR id < 1 OR conversation_seq > 134217726;
DROP TABLE layout_fits;

CREATE TABLE messages_by_place (
    -- conversation_seq << 36 | id: the one stored key.
    place            INTEGER PRIMARY KEY,
    conversation_seq INTEGER NOT NULL GENERATED ALWAYS AS (place >> 36) VIRTUAL
                     REFERENCES conversations(seq),
    -- Unique across the server, allocated by the single writer in commit order.
    id               INTEGER NOT NULL GENERATED ALWAYS AS (place & 68719476735) VIRTUAL,
    sender           TEXT    NOT NULL,
    -- Empty for a tombstone: deleting erases the content.
    body             TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    edited_at        INTEGER,
    deleted          INTEGER NOT NULL DEFAULT 0,
    reply_to         INTEGER,
    client_id        TEXT,
    -- A fingerprint of the sender and body first posted with client_id.
    client_fingerprint INTEGER,
    -- The conversation's version when the message was appended.
    created_version  INTEGER NOT NULL,
    -- The conversation's version at the message's last change.
    version          INTEGER NOT NULL
);

INSERT INTO messages_by_place (place, sender, body, created_at, edited_at, deleted, reply_to,
                               client_id, client_fingerprint, created_version, version)
    SELECT (conversation_seq << 36) | id, sender, body, created_at, edited_at, deleted, reply_to,
           client_id, client_fingerprint, created_version, version
    FROM messages ORDER BY conversation_seq, id;

DROP TABLE messages;
ALTER TABLE messages_by_place RENAME TO messages;

-- The same three indexes as 0001, now on the generated columns.
CREATE UNIQUE INDEX messages_by_id ON messages (id);
CREATE UNIQUE INDEX messages_by_version ON messages (conversation_seq, version);
CREATE UNIQUE INDEX messages_by_client_id ON messages (conversation_seq, client_id)
    WHERE client_id IS NOT NULL;
