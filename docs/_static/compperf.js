/* Reading (issue 21): each example figure links to its full-size image, the largest
   in its srcset (sphinx-gallery's image_srcset: the 2x copy where one was drawn). */
(function () {
  "use strict";
  function largest(img) {
    var best = img.getAttribute("src"), scale = 1;
    (img.getAttribute("srcset") || "").split(",").forEach(function (entry) {
      var parts = entry.trim().split(/\s+/);
      var factor = parseFloat((parts[1] || "1x").replace(/x$/, "")) || 1;
      if (parts[0] && factor > scale) {
        best = parts[0];
        scale = factor;
      }
    });
    return best;
  }
  /* A chapter page: its title's number ("3. ") prefixes its lessons' numbers (CSS). */
  function chapterNumber() {
    var number = document.querySelector("article h1 .section-number");
    var grid = document.querySelector(".sphx-glr-thumbnails");
    if (!number || !grid) return;
    var text = number.textContent.trim().replace(/\.$/, "");
    if (/^[0-9]+$/.test(text)) {
      grid.style.setProperty("--compperf-chapter", JSON.stringify(text + "."));
    }
  }
  /* Long words in titles get soft hyphens, so that a narrow screen breaks them with a
     hyphen even where the browser has no hyphenation dictionary (CSS hyphens: auto
     does the rest where it has one). Russian: Khmelev's syllable rules; any language:
     the humps of a CamelCase name (DistributedDataParallel). Code is left alone. */
  var SHY = "\u00ad";
  var ALL = "[абвгдеёжзийклмнопрстуфхцчшщъыьэюя]", V = "[аеёиоуыэюя]";
  var C = "[бвгджзклмнпрстфхцчшщ]", X = "[йъь]";
  var RUSSIAN = [
    [X, ALL + ALL], [V, V + ALL], [V + C, C + V], [C + V, C + V],
    [V + C, C + C + V], [V + C + C, C + C + V]
  ].map(function (rule) {
    return new RegExp("(" + rule[0] + ")(?=" + rule[1] + ")", "gi");
  });
  function softHyphens(word, russian) {
    if (word.length < 10) return word;
    if (russian && /[а-яё]/i.test(word)) {
      RUSSIAN.forEach(function (rule) { word = word.replace(rule, "$1" + SHY); });
      return word;
    }
    return word.replace(/([a-z]{3,})(?=[A-Z][a-z]{2,})/g, "$1" + SHY);
  }
  function hyphenateTitles() {
    var russian = /^ru\b/i.test(document.documentElement.lang || "");
    document.querySelectorAll("article h1, article h2, article h3, .sphx-glr-thumbnail-title")
      .forEach(function (title) {
        var walker = document.createTreeWalker(title, NodeFilter.SHOW_TEXT);
        for (var node = walker.nextNode(); node; node = walker.nextNode()) {
          if (node.parentElement.closest("code, pre, .headerlink")) continue;
          node.nodeValue = node.nodeValue.replace(/[\wа-яё]+/gi, function (word) {
            return softHyphens(word, russian);
          });
        }
      });
  }
  function link() {
    var images = document.querySelectorAll("img.sphx-glr-single-img, img.sphx-glr-multi-img");
    images.forEach(function (img) {
      if (img.closest("a")) return;
      var a = document.createElement("a");
      a.className = "compperf-full-size";
      a.href = largest(img);
      img.parentNode.insertBefore(a, img);
      a.appendChild(img);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", link);
    document.addEventListener("DOMContentLoaded", chapterNumber);
    document.addEventListener("DOMContentLoaded", hyphenateTitles);
  } else {
    link();
    chapterNumber();
    hyphenateTitles();
  }
})();
