-- Conversation membership: who belongs to a conversation, and as what.
-- Never edit this file once shipped: add 0004_*.sql instead.

-- Keyed by (conversation, user) in a WITHOUT ROWID table, so a
-- conversation's members sit together in user_id order: a page of members is
-- one seek and a forward scan from the last user_id seen (never OFFSET), and
-- the check made on every request in tokens mode, "is this user a member and
-- with which role", is one point lookup on the primary key.
CREATE TABLE members (
    conversation_seq INTEGER NOT NULL REFERENCES conversations(seq),
    -- A token's `sub`: 1 to 64 characters of [A-Za-z0-9_.@-], ordered
    -- byte by byte (the keyset order of member pages).
    user_id          TEXT    NOT NULL COLLATE BINARY,
    role             TEXT    NOT NULL CHECK (role IN ('member', 'owner')),
    -- Milliseconds since the Unix epoch, UTC; kept when the role changes.
    joined_at        INTEGER NOT NULL,
    PRIMARY KEY (conversation_seq, user_id)
) WITHOUT ROWID;

-- A user's conversations (its inbox) are a range read on this index.
CREATE UNIQUE INDEX members_by_user ON members (user_id, conversation_seq);
