// Einsum (ONNX Einsum-12): a sum of products over the labels of an equation such as
// "bij,bjk->bik", "ij->ji", "i,i", "...ii->...i" (diagonal: a label repeated within one
// operand), with "..." standing for broadcast leading dims. Without "->" the output takes
// the ellipsis dims and then the labels used once, in alphabetical order. Dtypes: float32,
// float64, int32, int64 (all inputs one dtype; integer sums wrap).
//
// Computed by plain index loops over every label value (output labels outermost), which is
// correct for any equation and fast enough for the small tensors Einsum sees in practice.
// More than 2^32 iterations (the product of all label sizes) is an UnsupportedOpError; an
// output label that repeats ("ii->ii") is a ModelError.
#include <algorithm>
#include <cctype>
#include <map>

#include "kernels/reference/wrapping.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

constexpr int kEllipsisBase = 256;  // label ids of ellipsis dims: 256, 257, ...

/// One equation with labels resolved for given input ranks: per operand the label of each
/// of its dims, the output's labels, and every label's size.
struct Plan {
  std::vector<std::vector<int>> in_labels;
  std::vector<int> out_labels;
  std::map<int, int64_t> size;
};

class EinsumOp final : public Op {
 public:
  EinsumOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    const std::string eq = attrs.require_string("equation");
    for (char c : eq) {
      if (!std::isspace(static_cast<unsigned char>(c))) equation_ += c;
    }
    const size_t arrow = equation_.find("->");
    std::string lhs = equation_.substr(0, arrow);
    explicit_output_ = arrow != std::string::npos;
    if (explicit_output_) output_term_ = equation_.substr(arrow + 2);
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      terms_.push_back(lhs.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    for (const std::string& t : terms_) check_term(t);
    if (explicit_output_) {
      check_term(output_term_);
      const size_t e = output_term_.find("...");
      for (size_t i = 0; i < output_term_.size(); ++i) {
        if (e != std::string::npos && i >= e && i < e + 3) continue;
        const size_t next = output_term_.find(output_term_[i], i + 1);
        TERN_CHECK(next == std::string::npos, ModelError,
                   "{}: output label '{}' of '{}' appears more than once", where(), output_term_[i],
                   equation_);
      }
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(inputs.size() == terms_.size(), ModelError,
               "{}: the equation '{}' has {} operands but the node has {} inputs", where(),
               equation_, terms_.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      check_dtype(inputs[i].dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64},
                  where(), static_cast<int>(i), "Inputs");
      check_same_dtype(inputs[i].dtype, inputs[0].dtype, where(), static_cast<int>(i), "Inputs", 0,
                       "Inputs");
    }
    std::vector<Shape> shapes;
    for (const InferInput& in : inputs) shapes.push_back(in.shape);
    const Plan plan = make_plan(shapes);
    Shape out;
    for (int l : plan.out_labels) out.push_back(plan.size.at(l));
    return {TensorType{inputs[0].dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    std::vector<Tensor> xs;
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs) {
      xs.push_back(t.contiguous());
      shapes.push_back(t.shape());
    }
    const Plan plan = make_plan(shapes);
    // All labels: the output's first, then the summed ones.
    std::vector<int> labels = plan.out_labels;
    for (const auto& [l, n] : plan.size) {
      if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
    }
    const size_t L = labels.size();
    std::vector<int64_t> sizes(L);
    for (size_t k = 0; k < L; ++k) sizes[k] = plan.size.at(labels[k]);
    // Per operand and per loop label: the element stride (0 for absent / broadcast dims).
    auto strides_for = [&](const std::vector<int>& dims_labels, const Shape& shape) {
      std::vector<int64_t> st(L, 0);
      int64_t s = 1;
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (shape[d] != 1) {
          const size_t k = std::find(labels.begin(), labels.end(), dims_labels[d]) - labels.begin();
          st[k] += s;
        }
        s *= shape[d];
      }
      return st;
    };
    std::vector<std::vector<int64_t>> in_st;
    for (size_t i = 0; i < xs.size(); ++i)
      in_st.push_back(strides_for(plan.in_labels[i], shapes[i]));
    const std::vector<int64_t> out_st = strides_for(plan.out_labels, y.shape());
    visit_dtype<float, double, int32_t, int64_t>(y.dtype(), where(), [&]<typename T>() {
      T* out = y.data<T>();
      std::fill(out, out + y.numel(), T{0});
      for (int64_t n : sizes) {
        if (n == 0) return;
      }
      std::vector<const T*> src;
      for (const Tensor& t : xs) src.push_back(t.data<T>());
      std::vector<int64_t> idx(L, 0);
      while (true) {
        T prod = T{1};
        for (size_t i = 0; i < src.size(); ++i) {
          int64_t off = 0;
          for (size_t k = 0; k < L; ++k) off += idx[k] * in_st[i][k];
          prod = kernels::ref::wrapping_mul(prod, src[i][off]);
        }
        int64_t off = 0;
        for (size_t k = 0; k < L; ++k) off += idx[k] * out_st[k];
        out[off] = kernels::ref::wrapping_add(out[off], prod);
        size_t k = L;
        while (k > 0 && ++idx[k - 1] == sizes[k - 1]) idx[--k] = 0;
        if (k == 0) break;
      }
    });
  }

 private:
  void check_term(const std::string& t) const {
    const size_t e = t.find("...");
    for (size_t i = 0; i < t.size(); ++i) {
      if (e != std::string::npos && i >= e && i < e + 3) continue;
      TERN_CHECK(std::isalpha(static_cast<unsigned char>(t[i])), ModelError,
                 "{}: bad equation '{}' (labels are letters, with at most one '...' per term)",
                 where(), equation_);
    }
  }

  // Labels of each dim of a term for an operand of rank `rank`.
  std::vector<int> term_labels(const std::string& t, int rank, int* ellipsis_rank) const {
    std::vector<int> out;
    const size_t e = t.find("...");
    const int letters = static_cast<int>(t.size()) - (e == std::string::npos ? 0 : 3);
    if (e == std::string::npos) {
      TERN_CHECK(letters == rank, ShapeError,
                 "{}: equation term '{}' has {} labels but its operand has rank {}", where(), t,
                 letters, rank);
    } else {
      TERN_CHECK(letters <= rank, ShapeError,
                 "{}: equation term '{}' has {} labels but its operand has rank {}", where(), t,
                 letters, rank);
      *ellipsis_rank = rank - letters;
    }
    for (size_t i = 0; i < t.size(); ++i) {
      if (e != std::string::npos && i == e) {
        for (int k = 0; k < rank - letters; ++k)
          out.push_back(kEllipsisBase + (rank - letters - 1 - k));
        i += 2;
      } else {
        out.push_back(static_cast<unsigned char>(t[i]));
      }
    }
    return out;
  }

  // Ellipsis dims are numbered from the right (kEllipsisBase = the last one), so operands
  // with fewer ellipsis dims broadcast against the others.
  Plan make_plan(const std::vector<Shape>& shapes) const {
    Plan p;
    int max_ell = 0;
    std::map<int, int> count;
    for (size_t i = 0; i < shapes.size(); ++i) {
      int ell = 0;
      p.in_labels.push_back(term_labels(terms_[i], static_cast<int>(shapes[i].size()), &ell));
      max_ell = std::max(max_ell, ell);
      for (size_t d = 0; d < shapes[i].size(); ++d) {
        const int l = p.in_labels[i][d];
        const int64_t n = shapes[i][d];
        count[l] += 1;
        auto it = p.size.find(l);
        if (it == p.size.end() || (l >= kEllipsisBase && it->second == 1)) {
          p.size[l] = n;
        } else {
          TERN_CHECK(n == it->second || (n == 1 && l >= kEllipsisBase), ShapeError,
                     "{}: label '{}' has sizes {} and {}", where(),
                     l >= kEllipsisBase ? std::string("...") : std::string(1, static_cast<char>(l)),
                     it->second, n);
        }
      }
    }
    if (explicit_output_) {
      int unused = 0;
      const bool has_ell = output_term_.find("...") != std::string::npos;
      const int letters = static_cast<int>(output_term_.size()) - (has_ell ? 3 : 0);
      p.out_labels = term_labels(output_term_, letters + (has_ell ? max_ell : 0), &unused);
      for (int l : p.out_labels) {
        TERN_CHECK(p.size.count(l) != 0, ModelError,
                   "{}: output label '{}' of '{}' appears in no input", where(),
                   static_cast<char>(l), equation_);
      }
    } else {
      for (int k = max_ell - 1; k >= 0; --k) p.out_labels.push_back(kEllipsisBase + k);
      for (const auto& [l, c] : count) {
        if (l < kEllipsisBase && c == 1) p.out_labels.push_back(l);
      }
    }
    check_iterations(p);
    return p;
  }

  // The loops in run() visit every combination of label values: UnsupportedOpError when
  // that is more than 2^32 iterations (ShapeError if the count overflows int64).
  void check_iterations(const Plan& p) const {
    constexpr int64_t kMaxIterations = int64_t{1} << 32;
    for (const auto& [l, n] : p.size) {
      if (n == 0) return;  // nothing to loop over
    }
    int64_t iterations = 1;
    for (const auto& [l, n] : p.size) {
      iterations = checked_mul(iterations, n, where(), "the number of Einsum iterations");
      TERN_CHECK(iterations <= kMaxIterations, UnsupportedOpError,
                 "{}: '{}' needs more than 2^32 loop iterations (the product of all label "
                 "sizes); at most 2^32 supported",
                 where(), equation_);
    }
  }

  std::string equation_;
  std::vector<std::string> terms_;
  std::string output_term_;
  bool explicit_output_ = false;
};

}  // namespace

void register_einsum(OpRegistry& r) {
  OpSchema s = make_schema<EinsumOp>("Einsum", 1, 1 << 16);
  r.add(std::move(s));
}

}  // namespace tern::ops
