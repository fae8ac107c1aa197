-- The first PostgreSQL schema of the chat history store: the same data as
-- SQLite's migrations 0001-0004 (conversations, messages, members), laid out
-- for several server instances writing to one database at once.
-- Never edit this file once shipped: add 0002_*.sql instead (the migrator
-- keeps a checksum of every applied file and refuses a database whose files
-- changed). It runs inside the migrator's transaction: no BEGIN or COMMIT
-- here, and nothing that refuses a transaction block (CREATE INDEX
-- CONCURRENTLY).
--
-- How writers keep the guarantees across instances
-- -------------------------------------------------
-- Every write to a conversation (append, edit, delete, member change) first
-- locks its `conversations` row (SELECT ... FOR UPDATE, or the UPDATE that
-- bumps its counters), and holds that lock until COMMIT. A transaction that
-- touches several conversations locks them in ascending `seq`, so two never
-- wait on each other in a cycle. Writers run at READ COMMITTED: a writer
-- that waited for the lock then reads the row as the previous writer
-- committed it.
--
-- * Message ids in commit order within a conversation: an id is taken from
--   the `message_ids` sequence while the conversation's row is locked. The
--   next writer to that conversation takes its id only after the lock is
--   released, that is after the previous writer committed (or rolled back),
--   so a higher id never becomes visible before a lower one of the same
--   conversation. Ids of different conversations interleave freely.
--
-- * The change counter: `conversations.version` is bumped (+1 per append,
--   edit, delete) under the same lock, and a message row records the version
--   of its last change. A reader following "version > last seen" in one
--   conversation cannot skip a change: version V+1 is assigned only after
--   the transaction that took V committed, so there is no transaction that
--   took a lower value and commits later. This is the trap of a shared
--   sequence or a global counter read by `> last seen` (a transaction takes
--   41, another takes 42 and commits first, a reader sees 42 and never looks
--   back at 41); counters here are only ever allocated under the lock of the
--   row that holds them, and each commits in the order it was taken.
--   A server-wide counter (the inbox's `activity`) follows the same rule:
--   one row, bumped as the last write before COMMIT, after every
--   conversation lock, so its values too commit in the order they are taken.

-- One row per conversation, with the counters every change updates in the
-- same transaction, so reading a conversation is one row.
-- fillfactor 70: every append rewrites this row; the free room on each page
-- lets PostgreSQL keep the new row version on the same page (a HOT update:
-- none of the changing columns is indexed), so appends do not grow the
-- table or its indexes between vacuums.
CREATE TABLE conversations (
    -- A compact integer key: messages and members refer to it.
    seq           bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The public id, 1 to 64 characters of [A-Za-z0-9_-]; "C" compares
    -- byte by byte whatever the database's locale.
    id            text    COLLATE "C" NOT NULL UNIQUE,
    title         text,
    -- Milliseconds since the Unix epoch, UTC.
    created_at    bigint  NOT NULL,
    -- Every message ever appended, tombstones included.
    message_count bigint  NOT NULL DEFAULT 0,
    oldest_id     bigint,
    newest_id     bigint,
    -- The change counter: +1 for every append, edit and delete (see above).
    version       bigint  NOT NULL DEFAULT 0
) WITH (fillfactor = 70);

-- Message ids: unique across the server, in commit order within a
-- conversation (see above). CACHE 1 (the default, stated because it
-- matters): a cache of N would hand each session its own block of ids, and
-- a session holding an old block would allocate ids below those another
-- session already committed in the same conversation.
CREATE SEQUENCE message_ids AS bigint MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE;

-- A page of a conversation is a range scan of the primary key, one seek and
-- a forward or backward walk whatever the depth (never OFFSET).
CREATE TABLE messages (
    conversation_seq   bigint  NOT NULL REFERENCES conversations (seq),
    id                 bigint  NOT NULL,
    sender             text    NOT NULL,
    -- Empty for a tombstone: deleting erases the content.
    body               text    NOT NULL,
    created_at         bigint  NOT NULL,
    edited_at          bigint,
    deleted            boolean NOT NULL DEFAULT false,
    reply_to           bigint,
    client_id          text,
    -- A fingerprint of the sender and body first posted with client_id, so a
    -- retry is recognised even after an edit; cleared when the message is
    -- deleted, with everything else derived from its text.
    client_fingerprint bigint,
    -- The conversation's version when the message was appended: an event is
    -- `created` when this is after the `since` asked about.
    created_version    bigint  NOT NULL,
    -- The conversation's version at the message's last change.
    version            bigint  NOT NULL,
    PRIMARY KEY (conversation_seq, id)
);

-- The compacted change feed: the messages changed after a version, in the
-- order of their last change, is a range read on this index.
CREATE UNIQUE INDEX messages_by_version ON messages (conversation_seq, version);

-- Idempotent appends: a client_id is used once per conversation, ever,
-- whichever instance receives the retry (the unique index decides).
CREATE UNIQUE INDEX messages_by_client_id ON messages (conversation_seq, client_id)
    WHERE client_id IS NOT NULL;

-- Conversation membership: who belongs to a conversation, and as what. A
-- page of members is a range read of the primary key from the last user_id
-- seen; "is this user a member, with which role" is one point lookup.
CREATE TABLE members (
    conversation_seq bigint NOT NULL REFERENCES conversations (seq),
    -- A token's `sub`: 1 to 64 characters of [A-Za-z0-9_.@-], ordered byte
    -- by byte (the keyset order of member pages).
    user_id          text   COLLATE "C" NOT NULL,
    role             text   NOT NULL CHECK (role IN ('member', 'owner')),
    -- Milliseconds since the Unix epoch, UTC; kept when the role changes.
    joined_at        bigint NOT NULL,
    PRIMARY KEY (conversation_seq, user_id)
);

-- A user's conversations (its inbox) are a range read on this index.
CREATE UNIQUE INDEX members_by_user ON members (user_id, conversation_seq);
