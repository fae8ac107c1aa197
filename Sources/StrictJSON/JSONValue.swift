/// A parsed JSON value, as `JSONReader` produces it.
///
/// Numbers keep their literal text: the contract's ids must be integers that
/// fit `Int64` exactly, and converting through `Double` first would round
/// `9007199254740993` silently and accept `1.0` as an id.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The JSON type's name, for error messages ("sender must be a string, not a number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON number as written, plus its exact integer value when it has one.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The literal, e.g. `-12`, `1.0`, `6.02e23`.
    public let literal: String
    /// True when the literal has no fraction and no exponent (`1`, not `1.0` or `1e0`).
    public let isIntegerLiteral: Bool
    /// The value when the literal is an integer that fits `Int64`; nil otherwise.
    public let int64Value: Int64?

    public init(literal: String, isIntegerLiteral: Bool, int64Value: Int64?) {
        self.literal = literal
        self.isIntegerLiteral = isIntegerLiteral
        self.int64Value = int64Value
    }

    /// The nearest `Double`: infinite for literals beyond its range, never a crash.
    public var doubleValue: Double { Double(literal) ?? .nan }

    public var description: String { literal }
}
