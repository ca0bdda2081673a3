// A directory of its own for each test that writes files, under the temporary directory and
// named after the suite, so parallel tests never share one and a leftover says whose it is.
import Foundation

/// A scratch directory removed by `remove()`.
public struct ScratchDirectory: Sendable {
    public let path: String

    /// - Parameter owner: a word for the directory's name (`ipdirect-OWNER-UUID`).
    public init(_ owner: String = "test") throws {
        path = NSTemporaryDirectory() + "ipdirect-\(owner)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
