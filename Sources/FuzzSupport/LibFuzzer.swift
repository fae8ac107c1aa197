import FuzzLibFuzzer
import Foundation

/// Starts libFuzzer from a fuzz target's `main.swift`.
///
/// SwiftPM links an executable's own `main`, so libFuzzer's `main` never
/// runs; this hands the command line to libFuzzer's driver instead, which
/// then behaves exactly like a C fuzzer (`-max_total_time`, `-runs`, corpus
/// directories, crash files). Each target also defines the C symbol
/// `LLVMFuzzerTestOneInput` with the same function, which the runtime's
/// unused `main` refers to and the linker therefore wants to find.
public enum LibFuzzer {
    /// The signature libFuzzer calls once per input.
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    /// Runs the fuzzer with this process's arguments and exits with its status.
    public static func run(_ testOneInput: TestOneInput) -> Never {
        disableSwiftBacktracer()
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
        exit(status)
    }

    /// Swift's runtime catches fatal signals to print a backtrace, and
    /// libFuzzer leaves a handler that is already installed alone: a trap
    /// or a failed property would then kill the process before libFuzzer
    /// saves the input that caused it. The backtracer reads its setting
    /// when the process starts, hence the re-exec with it turned off.
    static func disableSwiftBacktracer() {
        guard ProcessInfo.processInfo.environment["SWIFT_BACKTRACE"] != "enable=no" else { return }
        setenv("SWIFT_BACKTRACE", "enable=no", 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Only reached when exec failed: fuzz on, failures are still reported.
        FileHandle.standardError.write(Data("warning: could not turn off the Swift backtracer; failing inputs may not be saved\n".utf8))
    }

    /// The input as an array (libFuzzer may pass a null pointer for size 0).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}
