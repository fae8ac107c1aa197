-- Live reads (docs/API.md, "Live"): jumping to a time, and the backend
-- feed of every change on the server.
-- Never edit this file once shipped: add 0005_*.sql instead.

-- Jump by time: the first message of a conversation created at or after
-- T is one seek here, ties to the smallest id. The writer keeps
-- created_at non-decreasing in id order within a conversation (under the
-- conversation's lock, a time below the newest message's takes that
-- message's time: instances' clocks differ), so the first entry by time is
-- also the smallest id created at or after T.
CREATE INDEX messages_by_time ON messages (conversation_seq, created_at, id);

-- The backend feed: one row per change, keyed by the change's value of
-- the server-wide `activity` counter, inserted by the batch that makes the
-- change, just before its COMMIT, while it holds the counter's row: so
-- the values commit in order, and a reader's snapshot that holds activity
-- N+1 holds N. `kind`: 0 created, 1 edited, 2 deleted (message_id set),
-- 3 member_added, 4 member_changed (user_id, role and joined_at as the
-- change left the member), 5 member_removed (user_id). A message's text
-- is not copied here: the feed joins the message as it is now, so a
-- deleted message's text is gone from it too.
CREATE TABLE change_log (
    activity         bigint   PRIMARY KEY,
    conversation_seq bigint   NOT NULL REFERENCES conversations (seq),
    kind             smallint NOT NULL CHECK (kind BETWEEN 0 AND 5),
    message_id       bigint,
    user_id          text     COLLATE "C",
    role             text,
    joined_at        bigint
);
