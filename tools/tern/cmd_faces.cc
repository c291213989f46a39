// `tern detect-faces IMAGE ...` and `tern demo`: RetinaFace on a photo.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "cli_util.h"
#include "commands.h"
#include "embedded.h"
#include "tern/session.h"
#include "vision/image.h"
#include "vision/retinaface.h"

namespace tern::cli {
namespace {

struct FacesOptions {
  std::string image;
  std::string output;
  std::string model;
  int size = 640;
  float threshold = 0.6f;
  bool json = false;
  int threads = 0;
};

Session open_model(const std::string& path, int threads) {
  SessionOptions options;
  options.num_threads = threads;
  if (!path.empty()) return Session(path, options);
  const EmbeddedFile model = embedded_model();
  return Session::from_memory(model.data, model.size, options);
}

// A JSON number rounded to `decimals` places (null if not finite).
nlohmann::json rounded(float v, int decimals) {
  if (!std::isfinite(v)) return nullptr;
  const double scale = std::pow(10.0, decimals);
  return std::round(double(v) * scale) / scale;
}

// {"faces": [{"box": [x1, y1, x2, y2], "score": s, "landmarks": [[x, y] x 5]}, ...]}:
// pixels with 2 decimals, scores with 4, on one line.
std::string faces_json(const std::vector<vision::Face>& faces) {
  std::string out = "{\"faces\": [";
  for (size_t i = 0; i < faces.size(); ++i) {
    const vision::Face& f = faces[i];
    out += i ? ", " : "";
    out += fmt::format("{{\"box\": [{}, {}, {}, {}], \"score\": {}, \"landmarks\": [",
                       rounded(f.box[0], 2).dump(), rounded(f.box[1], 2).dump(),
                       rounded(f.box[2], 2).dump(), rounded(f.box[3], 2).dump(),
                       rounded(f.score, 4).dump());
    for (int k = 0; k < 5; ++k) {
      out += fmt::format("{}[{}, {}]", k ? ", " : "", rounded(f.landmarks[k][0], 2).dump(),
                         rounded(f.landmarks[k][1], 2).dump());
    }
    out += "]}";
  }
  return out + "]}";
}

void print_faces_table(const std::vector<vision::Face>& faces) {
  if (faces.empty()) return;
  fmt::print("  {:>3}  {:>6}  {:>7} {:>7} {:>7} {:>7}  {}\n", "#", "score", "x1", "y1", "x2", "y2",
             "landmarks (x, y): left eye, right eye, nose, left mouth corner, right mouth corner");
  for (size_t i = 0; i < faces.size(); ++i) {
    const vision::Face& f = faces[i];
    std::string marks;
    for (int k = 0; k < 5; ++k) {
      marks +=
          fmt::format("{}({:.1f}, {:.1f})", k ? " " : "", f.landmarks[k][0], f.landmarks[k][1]);
    }
    fmt::print("  {:>3}  {:>6.4f}  {:>7.1f} {:>7.1f} {:>7.1f} {:>7.1f}  {}\n", i + 1, f.score,
               f.box[0], f.box[1], f.box[2], f.box[3], marks);
  }
}

std::string count_faces(size_t n) { return fmt::format("{} face{}", n, n == 1 ? "" : "s"); }

// Refuses to write the annotated copy over the photo it was made from.
void check_not_input(const std::string& image, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool same = fs::exists(output, ec)
                        ? fs::equivalent(image, output, ec)
                        : fs::weakly_canonical(image, ec) == fs::weakly_canonical(output, ec);
  if (same) {
    throw UsageError(fmt::format(
        "-o '{}' is the input image: refusing to overwrite it (choose another file)", output));
  }
}

// Checks -o before any work: a known image extension and an existing folder.
void check_output(const std::string& output) {
  if (!vision::can_save_image_as(output)) {
    throw UsageError(
        fmt::format("-o '{}': expected a .jpg, .jpeg, .png or .bmp file name", output));
  }
  const std::filesystem::path parent = std::filesystem::path(output).parent_path();
  std::error_code ec;
  TERN_CHECK(parent.empty() || std::filesystem::is_directory(parent, ec), IOError,
             "cannot write image '{}': no folder '{}'", output, parent.string());
}

int run_detect_faces(const FacesOptions& opt) {
  if (!opt.output.empty()) {
    check_not_input(opt.image, opt.output);
    check_output(opt.output);
  }
  vision::Image image = vision::load_image(opt.image);
  Session session = open_model(opt.model, opt.threads);
  vision::RetinaFaceOptions options;
  options.size = opt.size;
  options.threshold = opt.threshold;
  vision::DetectTimings timings;
  const std::vector<vision::Face> faces = vision::detect_faces(session, image, options, &timings);
  if (!opt.output.empty()) {
    vision::draw_faces(image, faces);
    vision::save_image(image, opt.output);
  }
  if (opt.json) {
    fmt::print("{}\n", faces_json(faces));
    return 0;
  }
  fmt::print("{} (score >= {}) in {} ({}x{}), model {}\n", count_faces(faces.size()), opt.threshold,
             opt.image, image.width, image.height,
             opt.model.empty() ? fmt::format("{} (embedded)", embedded_model().name) : opt.model);
  print_faces_table(faces);
  fmt::print("time: model run {:.1f} ms, preprocess {:.1f} ms, decode {:.1f} ms\n", timings.run_ms,
             timings.preprocess_ms, timings.postprocess_ms);
  if (!opt.output.empty()) fmt::print("wrote {}\n", opt.output);
  return 0;
}

struct DemoOptions {
  std::string output = "tern-demo.jpg";
  int threads = 0;
};

int run_demo(const DemoOptions& opt) {
  check_output(opt.output);
  const auto start = std::chrono::steady_clock::now();
  const EmbeddedFile photo = embedded_photo();
  const EmbeddedFile model = embedded_model();
  SessionOptions session_options;
  session_options.num_threads = opt.threads;
  Session session = Session::from_memory(model.data, model.size, session_options);
  vision::Image image = vision::load_image_from_memory(photo.data, photo.size, photo.name);
  vision::DetectTimings timings;
  const std::vector<vision::Face> faces = vision::detect_faces(session, image, {}, &timings);
  vision::draw_faces(image, faces);
  vision::save_image(image, opt.output);
  const double total_ms = ms_since(start);

  fmt::print("tern demo: RetinaFace-MobileNet0.25 ({}) on {} ({}x{}), both embedded in tern\n",
             model.name, photo.name, image.width, image.height);
  fmt::print("{} (score >= 0.6):\n", count_faces(faces.size()));
  print_faces_table(faces);
  fmt::print(
      "time: model run {:.1f} ms, total {:.1f} ms (load model, decode photo, preprocess, "
      "run, decode, draw, save) with {} thread{}\n",
      timings.run_ms, total_ms, session.num_threads(), session.num_threads() == 1 ? "" : "s");
  fmt::print("wrote {}\n", opt.output);
  return 0;
}

}  // namespace

Command add_detect_faces(CLI::App& app) {
  auto opt = std::make_shared<FacesOptions>();
  CLI::App* sub = app.add_subcommand(
      "detect-faces",
      "Find faces (boxes, scores, 5 landmarks) in a photo with RetinaFace-MobileNet0.25");
  sub->add_option("IMAGE", opt->image, "Photo (JPEG, PNG, BMP, ...)")->required();
  sub->add_option("-o,--output", opt->output,
                  "Write a copy of the photo with the faces drawn (.jpg, .png or .bmp)");
  sub->add_option("-m,--model", opt->model,
                  "RetinaFace ONNX model (default: the embedded retinaface_mnet025)");
  sub->add_option("-s,--size", opt->size, "Long side of the network input in pixels")
      ->capture_default_str()
      ->check(CLI::Range(16, 4096));
  sub->add_option("--threshold", opt->threshold, "Minimum face score")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_flag("--json", opt->json,
                "Print {\"faces\": [{\"box\": [x1, y1, x2, y2], \"score\": s, \"landmarks\": "
                "[[x, y] x 5]}, ...]} (original photo pixels)");
  sub->add_option("-t,--threads", opt->threads, "Threads (0 = one per core)")
      ->check(CLI::Range(0, 1024));
  return {sub, [opt] { return run_detect_faces(*opt); }};
}

Command add_demo(CLI::App& app) {
  auto opt = std::make_shared<DemoOptions>();
  CLI::App* sub = app.add_subcommand(
      "demo", "Detect the faces in the embedded demo photo and write an annotated copy");
  sub->add_option("-o,--output", opt->output, "Annotated photo to write")->capture_default_str();
  sub->add_option("-t,--threads", opt->threads, "Threads (0 = one per core)")
      ->check(CLI::Range(0, 1024));
  return {sub, [opt] { return run_demo(*opt); }};
}

}  // namespace tern::cli
