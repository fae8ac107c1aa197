-- Live reads (docs/API.md, "Live"): jumping to a time, and the backend
-- feed of every change on the server.
-- Never edit this file once shipped: add 0007_*.sql instead.

-- Jump by time: the first message of a conversation created at or after
-- T is one seek here (the rowid, `place`, follows created_at in each
-- entry, so ties go to the smallest id). The writer keeps created_at
-- non-decreasing in id order within a conversation (a clock that steps
-- back takes the previous message's time), so the first entry by time is
-- also the smallest id created at or after T.
CREATE INDEX messages_by_time ON messages (conversation_seq, created_at);

-- The backend feed: one row per change, keyed by the change's value of
-- the server-wide `activity` counter, written by the writer in the
-- transaction that makes the change. `kind`: 0 created, 1 edited,
-- 2 deleted (message_id set), 3 member_added, 4 member_changed (user_id,
-- role and joined_at as the change left the member), 5 member_removed
-- (user_id). A message's text is not copied here: the feed joins the
-- message as it is now, so a deleted message's text is gone from it too.
-- Kept for as long as the messages (docs/operations.md, "The change log").
CREATE TABLE change_log (
    activity         INTEGER PRIMARY KEY,
    conversation_seq INTEGER NOT NULL REFERENCES conversations(seq),
    kind             INTEGER NOT NULL CHECK (kind BETWEEN 0 AND 5),
    message_id       INTEGER,
    user_id          TEXT COLLATE BINARY,
    role             TEXT,
    joined_at        INTEGER
);
