import Foundation

/// A property every input must have. A failure aborts the process, which
/// libFuzzer reports like a crash: it saves the input as `crash-<sha1>`
/// and stops, so a broken property is found, minimised and replayed the
/// same way as a trap.
public func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if condition { return }
    FileHandle.standardError.write(Data("property failed at \(file):\(line): \(message())\n".utf8))
    abort()
}
