/// The store checks a read query with the same rules the HTTP layer
/// applied (`check()`), for callers that did not: done before a
/// connection is taken, so bad input costs nothing.
extension PageQuery {
    func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }
}

extension ChangeQuery {
    func validate() throws(StoreError) {
        do {
            try check()
        } catch {
            throw StoreError(error)
        }
    }
}
