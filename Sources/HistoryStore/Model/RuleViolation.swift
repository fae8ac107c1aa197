/// A value a client sent that breaks a rule of the contract: which value,
/// and the sentence that tells the client what it must be.
///
/// The rules (`MessageRules`, `PageQuery.check()`, `ChangeQuery.check()`)
/// throw it; the HTTP layer answers it as its field's 400 and the store as
/// `StoreError.invalid`, both with this one message.
public struct RuleViolation: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: InputField
    /// What the value must be, phrased to follow its name: "must be an integer from 1 to 200".
    public var requirement: String
    /// The value given, quoted in the message when that helps the reader.
    public var given: String?

    public init(_ field: InputField, _ requirement: String, given: String? = nil) {
        self.field = field
        self.requirement = requirement
        self.given = given
    }

    /// The requirement and, when quoted, what was given instead.
    public var reason: String { requirement + (given.map { ", not '\($0)'" } ?? "") }

    /// "limit must be an integer from 1 to 200, not '500'".
    public var message: String { "\(field.name) \(reason)" }

    public var description: String { message }
}

/// A rule on one integer a client sends: its range and the words that
/// state it. Text that is no integer at all breaks the rule in the same
/// words as a number out of range: the client learns what to send either way.
public struct IntegerRule: Sendable {
    public let field: InputField
    public let range: ClosedRange<Int64>
    public let requirement: String

    /// - Parameter requirement: defaults to "must be an integer from <low> to <high>".
    public init(_ field: InputField, _ range: ClosedRange<Int64>, requirement: String? = nil) {
        self.field = field
        self.range = range
        self.requirement = requirement ?? "must be an integer from \(range.lowerBound) to \(range.upperBound)"
    }

    public init(_ field: InputField, _ range: ClosedRange<Int>) {
        self.init(field, Int64(range.lowerBound)...Int64(range.upperBound))
    }

    /// `value` when it is in range.
    @discardableResult
    public func check(_ value: Int64) throws(RuleViolation) -> Int64 {
        guard range.contains(value) else { throw violation(given: String(value)) }
        return value
    }

    /// The violation for `text`, e.g. text that is not a number.
    public func violation(given text: String) -> RuleViolation {
        RuleViolation(field, requirement, given: text)
    }
}

extension StoreError {
    /// How the store reports a broken rule to a caller that did not check first.
    public init(_ violation: RuleViolation) {
        self = .invalid(field: violation.field, reason: violation.reason)
    }
}
