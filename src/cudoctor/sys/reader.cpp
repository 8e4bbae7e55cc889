// Sys::open_reader's default: reads copied out of map_file's blob (FakeSys, a test's root).
#include <algorithm>
#include <cstring>

#include "cudoctor/sys/sys.hpp"

namespace cudoctor::sys {
namespace {

class BlobReader final : public Reader {
 public:
  explicit BlobReader(std::shared_ptr<const Blob> blob) : m_blob(std::move(blob)) {}
  std::uint64_t size() const override { return m_blob->size(); }
  util::Result<std::size_t> read_at(std::uint64_t offset, unsigned char* buf, std::size_t n) const override {
    if (offset >= m_blob->size()) return std::size_t{0};
    const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, m_blob->size() - offset));
    std::memcpy(buf, m_blob->data() + offset, k);
    return k;
  }
  bool shrank() const override { return m_blob->shrank(); }

 private:
  std::shared_ptr<const Blob> m_blob;
};

}  // namespace

util::Result<std::unique_ptr<const Reader>> Sys::open_reader(std::string_view path) const {
  auto blob = map_file(path);
  if (!blob) return util::error(blob.error());
  return std::unique_ptr<const Reader>(std::make_unique<BlobReader>(std::move(blob).value()));
}

}  // namespace cudoctor::sys
