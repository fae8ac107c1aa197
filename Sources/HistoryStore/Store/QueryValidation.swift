/// The store checks a read query with the same rules the HTTP layer
/// applied (`check()`), for callers that did not: done before a
/// connection is taken, so bad input costs nothing.
extension PageQuery {
    package func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }
}

extension InboxQuery {
    package func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }

    /// The cursor as the store reads it; `.invalid(field: .cursor, ...)`
    /// for a string the store did not write.
    package func decodedCursor() throws(StoreError) -> InboxCursor? {
        guard let cursor else { return nil }
        guard let decoded = InboxCursor(encoded: cursor) else {
            throw .invalid(field: .cursor, reason: "must be a next_cursor of an earlier page")
        }
        return decoded
    }
}

extension InboxChangeQuery {
    package func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }
}

extension ChangeQuery {
    package func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }
}
