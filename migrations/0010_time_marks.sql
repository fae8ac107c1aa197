-- Time marks: one message in 64 of each conversation (those appended at a
-- version that is a multiple of 64) indexed by time, so a jump by time
-- (SQLiteReads.firstMessage) starts between the two marks around its time
-- and reads the few dozen messages between them, instead of a binary
-- search of some twenty rowid seeks over the whole conversation. Only
-- 1 append in 64 writes an entry (migration 0009 dropped the index by time
-- of every message: a leaf page written per append), and an edit or a
-- delete changes none of these columns. created_at never decreases in id
-- order within a conversation, and created_version grows with the id, so
-- the index's order is the conversation's.
-- Never edit this file once shipped: add 0011_*.sql instead.
CREATE INDEX messages_time_marks ON messages (conversation_seq, created_at, created_version)
    WHERE created_version % 64 = 0;
