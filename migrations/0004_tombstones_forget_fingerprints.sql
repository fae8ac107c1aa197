-- Deleting a message erases everything derived from its text. Tombstones
-- written before this release kept the fingerprint of the sender and body
-- first posted with their client_id, which let anyone confirm a guess of the
-- deleted text by retrying the client_id; the store now clears it on
-- delete, and this clears it on the tombstones already written.
-- Never edit this file once shipped: add 0005_*.sql instead.
UPDATE messages SET client_fingerprint = NULL WHERE deleted = 1 AND client_fingerprint IS NOT NULL;
