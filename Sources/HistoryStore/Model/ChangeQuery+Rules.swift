extension ChangeQuery {
    public static let sinceRule = IntegerRule(.since, 0...Int64.max,
                                              requirement: "must be a version, an integer from 0 to the conversation's version")
    public static let limitRule = IntegerRule(.limit, limitRange)

    // `min_id` and `max_id` name messages: 1 to Int64.max.
    public static let minIDRule = idBoundRule(.minID)
    public static let maxIDRule = idBoundRule(.maxID)

    private static func idBoundRule(_ field: InputField) -> IntegerRule {
        IntegerRule(field, 1...Int64.max, requirement: "must be a message id, an integer from 1 to \(Int64.max)")
    }

    /// The contract's rules for the change feed, in one place: the HTTP
    /// layer checks them before it asks, the store before it reads. `since`
    /// above the conversation's version is found by the read itself.
    public func check() throws(RuleViolation) {
        try Self.sinceRule.check(since)
        try Self.limitRule.check(Int64(limit))
        if let minID { try Self.minIDRule.check(minID) }
        if let maxID { try Self.maxIDRule.check(maxID) }
        if let minID, let maxID, minID > maxID {
            throw RuleViolation(.minID, "must not be greater than max_id (\(maxID))", given: String(minID))
        }
    }
}
