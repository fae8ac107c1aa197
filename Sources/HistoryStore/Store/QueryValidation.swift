/// Checks of read queries against the contract's ranges, done before a
/// connection is taken so bad input costs nothing. Field names are the
/// contract's query parameters, for the HTTP layer's messages.
extension PageQuery {
    func validate() throws(StoreError) {
        guard Self.limitRange.contains(limit) else {
            throw .invalid(field: "limit", reason: "must be an integer from \(Self.limitRange.lowerBound) to \(Self.limitRange.upperBound)")
        }
        switch cursor {
        case .newest:
            break
        case .before(let id):
            try Self.validateCursor(id, field: "before")
        case .after(let id):
            try Self.validateCursor(id, field: "after")
        case .between(let after, let before):
            try Self.validateCursor(after, field: "after")
            try Self.validateCursor(before, field: "before")
        case .around(let id):
            try Self.validateCursor(id, field: "around")
        }
        if let window {
            guard case .after = cursor else {
                throw .invalid(field: "window", reason: "is allowed only beside a lone after cursor")
            }
            guard Self.windowRange.contains(window) else {
                throw .invalid(field: "window", reason: "must be an integer from \(Self.windowRange.lowerBound) to \(Self.windowRange.upperBound)")
            }
        }
    }

    /// A cursor is a position, not a message: any id from 0 (below every
    /// message, so `after(0)` starts at the first one) to Int64.max.
    private static func validateCursor(_ id: Int64, field: String) throws(StoreError) {
        guard id >= 0 else {
            throw .invalid(field: field, reason: "must be a position from 0 to \(Int64.max)")
        }
    }
}

extension ChangeQuery {
    func validate() throws(StoreError) {
        guard since >= 0 else {
            throw .invalid(field: "since", reason: "must be a version from 0 to the conversation's current version")
        }
        guard Self.limitRange.contains(limit) else {
            throw .invalid(field: "limit", reason: "must be an integer from \(Self.limitRange.lowerBound) to \(Self.limitRange.upperBound)")
        }
        if let minID, minID < 1 {
            throw .invalid(field: "min_id", reason: "must be a message id from 1 to \(Int64.max)")
        }
        if let maxID, maxID < 1 {
            throw .invalid(field: "max_id", reason: "must be a message id from 1 to \(Int64.max)")
        }
        if let minID, let maxID, minID > maxID {
            throw .invalid(field: "min_id", reason: "must not be greater than max_id")
        }
    }
}
