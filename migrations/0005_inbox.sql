-- The inbox: each user's conversations, its read markers, and one
-- server-wide change counter (`activity`) that orders the user feed.
-- Never edit this file once shipped: add 0006_*.sql instead.
--
-- Fan-out on read: a post writes its message, its conversation's row and
-- (once per batch) the counter, whatever the number of members. A user's
-- inbox is read by joining its memberships to the conversations.

-- The last value the counter handed out: one row, written once per batch
-- by the writer, which keeps the value in memory meanwhile.
CREATE TABLE activity_counter (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);

-- The conversation's last change (append, edit, delete, member list) on
-- the counter. Existing conversations get distinct values in creation
-- order, and the counter starts past them.
ALTER TABLE conversations ADD COLUMN activity INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET activity = seq;
INSERT INTO activity_counter (id, value) SELECT 1, coalesce(max(seq), 0) FROM conversations;

-- The user feed of a user with few conversations changed since A walks this
-- from A and probes each conversation's membership.
CREATE INDEX conversations_by_activity ON conversations (activity);
-- The inbox order: newest message first (message ids are unique across
-- the server, so no two conversations tie), then the conversations without
-- messages (newest_id NULL) by id.
CREATE INDEX conversations_by_newest ON conversations (newest_id, id);

-- A member's read marker (NULL: nothing read yet) and the member row's own
-- last change (marker moved, role changed, joined) on the counter.
ALTER TABLE members ADD COLUMN last_read_id INTEGER;
ALTER TABLE members ADD COLUMN activity INTEGER NOT NULL DEFAULT 0;
CREATE INDEX members_by_user_activity ON members (user_id, activity);

-- Memberships that ended, kept so the user feed can say `removed`; a user
-- who joins again loses the row.
CREATE TABLE removed_members (
    user_id          TEXT    NOT NULL COLLATE BINARY,
    conversation_seq INTEGER NOT NULL REFERENCES conversations(seq),
    activity         INTEGER NOT NULL,
    PRIMARY KEY (user_id, conversation_seq)
) WITHOUT ROWID;
CREATE INDEX removed_members_by_user_activity ON removed_members (user_id, activity);
