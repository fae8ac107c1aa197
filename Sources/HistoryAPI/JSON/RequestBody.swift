import HistoryStore
import StrictJSON

/// A request body parsed as the contract wants it: one JSON object whose
/// fields are read by name with their contract type.
///
/// Each accessor throws the field's own `invalid_<field>` error, so a
/// handler reads like the contract: "sender: a required string".
/// Unknown fields are ignored (docs/API.md: room for newer clients).
///
/// ```swift
/// let body = try RequestBody(bytes)
/// let sender = try body.requiredString(.sender)
/// let replyTo = try body.optionalPositiveInt64(.replyTo)
/// ```
public struct RequestBody: Sendable {
    public let fields: [String: JSONValue]

    /// Parses `bytes` as one JSON object.
    /// - Parameter emptyMeansEmptyObject: `POST /v1/conversations` takes an empty body as `{}`.
    /// - Throws: `APIError` `invalid_json` when the bytes are not a JSON object.
    public init(_ bytes: [UInt8], emptyMeansEmptyObject: Bool = false) throws(APIError) {
        if bytes.isEmpty && emptyMeansEmptyObject {
            fields = [:]
            return
        }
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch {
            throw APIError.invalidJSON(error)
        }
        guard case .object(let fields) = value else {
            throw APIError(.invalidJSON, "the body must be a JSON object, not \(value.typeName == "array" ? "an" : "a") \(value.typeName)")
        }
        self.fields = fields
    }

    /// A string that must be present and not null.
    public func requiredString(_ field: InputField) throws(APIError) -> String {
        let name = field.name
        switch fields[name] {
        case .string(let text): return text
        case nil, .null?: throw APIError(invalid: field, "\(name) is required and must be a string")
        case let other?: throw APIError(invalid: field, "\(name) must be a string, not \(other.typeName)")
        }
    }

    /// A string, or nil when absent or null.
    public func optionalString(_ field: InputField) throws(APIError) -> String? {
        let name = field.name
        switch fields[name] {
        case .string(let text): return text
        case nil, .null?: return nil
        case let other?: throw APIError(invalid: field, "\(name) must be a string or null, not \(other.typeName)")
        }
    }

    /// An integer in `1...Int64.max`, or nil when absent or null. `1.0` and
    /// `1e0` are refused: an id is an integer, and a client sending a float
    /// has a bug that rounding would hide.
    public func optionalPositiveInt64(_ field: InputField) throws(APIError) -> Int64? {
        let name = field.name
        switch fields[name] {
        case nil, .null?:
            return nil
        case .number(let number)?:
            guard number.isIntegerLiteral else {
                throw APIError(invalid: field, "\(name) must be an integer, not \(abbreviated(number.literal))")
            }
            guard let value = number.int64Value, value > 0 else {
                throw APIError(invalid: field, "\(name) must be a positive 64-bit integer, not \(abbreviated(number.literal))")
            }
            return value
        case let other?:
            throw APIError(invalid: field, "\(name) must be an integer or null, not \(other.typeName)")
        }
    }
}

extension RequestBody {
    /// A required integer under `rule` (its range, its words, its field's
    /// code); `1.0` and `1e0` are refused as `optionalPositiveInt64` refuses them.
    public func requiredInteger(_ rule: IntegerRule) throws(APIError) -> Int64 {
        let name = rule.field.name
        switch fields[name] {
        case .number(let number)?:
            guard number.isIntegerLiteral, let value = number.int64Value else {
                throw APIError(rule.violation(given: abbreviated(number.literal)))
            }
            return try APIError.enforcing { () throws(RuleViolation) in try rule.check(value) }
        case nil, .null?:
            throw APIError(invalid: rule.field, "\(name) is required and \(rule.requirement)")
        case let other?:
            throw APIError(invalid: rule.field, "\(name) \(rule.requirement), not \(other.typeName)")
        }
    }
}

/// Echoing a 60 KB number literal back in an error message helps nobody.
func abbreviated(_ text: String, to maximum: Int = 40) -> String {
    text.count <= maximum ? text : String(text.prefix(maximum)) + "..."
}
