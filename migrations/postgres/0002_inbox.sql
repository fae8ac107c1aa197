-- The inbox: each user's conversations, its read markers, and one
-- server-wide change counter (`activity`) that orders the user feed; the
-- same data as SQLite's 0005_inbox.sql.
-- Never edit this file once shipped: add 0003_*.sql instead.
--
-- Fan-out on read: a post writes its message, its conversation's row and
-- the counter, whatever the number of members. A user's inbox is read by
-- joining its memberships to the conversations.
--
-- The counter across instances: a feed that follows "activity > A" must
-- never meet a value that commits after a higher one was seen. So the
-- counter is one row, and a writer takes its values with
-- `UPDATE activity_counter SET value = value + n RETURNING value` after
-- every conversation row lock it needs (0001's lock order: conversations by
-- seq, then this row) and holds the row lock until COMMIT: the next writer
-- takes its values only after this one committed or rolled back. Every
-- writing transaction passes through this row once, at its end, for the
-- time of its last writes and its COMMIT; group commit (many appends in one
-- transaction) is what keeps that from limiting appends per second.

-- The last value the counter handed out: one row.
CREATE TABLE activity_counter (
    id    integer PRIMARY KEY CHECK (id = 1),
    value bigint  NOT NULL
);
INSERT INTO activity_counter (id, value) SELECT 1, coalesce(max(seq), 0) FROM conversations;

-- The conversation's last change (append, edit, delete, member list) on
-- the counter. Existing conversations get distinct values in creation
-- order, below the counter's start.
ALTER TABLE conversations ADD COLUMN activity bigint NOT NULL DEFAULT 0;
UPDATE conversations SET activity = seq;

-- The user feed of a user with few conversations changed since A walks this
-- from A and probes each conversation's membership.
CREATE INDEX conversations_by_activity ON conversations (activity);
-- The inbox order: newest message first (message ids are unique across
-- the server, so no two conversations tie), then the conversations without
-- messages (newest_id NULL) by id.
CREATE INDEX conversations_by_newest ON conversations (newest_id, id);

-- A member's read marker (NULL: nothing read yet) and the member row's own
-- last change (marker moved, role changed, joined) on the counter.
ALTER TABLE members ADD COLUMN last_read_id bigint;
ALTER TABLE members ADD COLUMN activity bigint NOT NULL DEFAULT 0;
CREATE INDEX members_by_user_activity ON members (user_id, activity);

-- Memberships that ended, kept so the user feed can say `removed`; a user
-- who joins again loses the row.
CREATE TABLE removed_members (
    user_id          text   COLLATE "C" NOT NULL,
    conversation_seq bigint NOT NULL REFERENCES conversations (seq),
    activity         bigint NOT NULL,
    PRIMARY KEY (user_id, conversation_seq)
);
CREATE INDEX removed_members_by_user_activity ON removed_members (user_id, activity);
